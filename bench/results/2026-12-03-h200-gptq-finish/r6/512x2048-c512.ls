total 4805556
drwxr-xr-x 2 root root       4096 Dec  3 06:18 .
drwxrwxrwt 6 root root       4096 Dec  3 06:16 ..
-rw-r--r-- 1 root root        850 Dec  3 06:18 config.json
-rw-r--r-- 1 root root 4920871776 Dec  3 06:18 model.safetensors
