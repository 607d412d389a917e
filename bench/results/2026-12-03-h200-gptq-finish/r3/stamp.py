"""Runs a command, stamping each stdout line with the seconds since the
spawn; the last line says when the process exited. Shows what a command's
own clock leaves out: process start before its first line, exit after its
last."""
import subprocess, sys, time
t0 = time.time()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
for line in p.stdout:
    sys.stdout.write(f"{time.time() - t0:8.3f} {line}")
rc = p.wait()
print(f"{time.time() - t0:8.3f} exited rc={rc}")
