total 4805556
drwxr-xr-x 2 root root       4096 Dec  3 06:14 .
drwxrwxrwt 6 root root       4096 Dec  3 06:14 ..
-rw-r--r-- 1 root root        850 Dec  3 06:14 config.json
-rw-r--r-- 1 root root 4920871776 Dec  3 06:14 model.safetensors
