total 4805560
drwxr-xr-x 3 root root       4096 Dec  3 08:45 .
drwxrwxrwt 8 root root       4096 Dec  3 08:45 ..
-rw-r--r-- 1 root root        850 Dec  3 08:45 config.json
-rw-r--r-- 1 root root 4920871776 Dec  3 08:45 model.safetensors
drwxr-xr-x 2 root root       4096 Dec  3 08:45 .qfuse-progress.removing-15311-0
