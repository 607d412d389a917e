total 4805560
drwxr-xr-x  3 root root       4096 Dec  3 10:04 .
drwxrwxrwt 10 root root       4096 Dec  3 10:04 ..
-rw-r--r--  1 root root        850 Dec  3 10:04 config.json
-rw-r--r--  1 root root 4920871776 Dec  3 10:04 model.safetensors
drwxr-xr-x  2 root root       4096 Dec  3 10:04 .qfuse-progress.removing-13023-0
