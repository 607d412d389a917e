"""`run` and `bench`: an artifact on the GPU through the runtime, with given or
random weights and inputs."""
import os
import sys

from .atomic import atomic_open, write_json
from .progress import Progress


def open_runtime(args):
    """The artifact opened on --device, with --weights bound (else random ones)."""
    from .runtime import Runtime
    rt = Runtime(args.artifact, device=args.device)
    if args.weights:
        with Progress("loading weights"):
            rt.load_weights(args.weights)
    else:
        with Progress("binding random weights"):
            rt.bind_random_weights(args.seed)
    return rt


def cmd_run(args):
    from .runtime import numpy, random_inputs
    with open_runtime(args) as rt:
        print(f"{args.artifact}: runs {rt.chip}", file=sys.stderr)
        batches = [args.batch] if args.batch else rt.plan_batches()
        for batch in batches:
            for item in args.input or []:
                name, _, path = item.partition("=")
                if numpy is not None and path.endswith(".npy"):
                    rt.set_input(batch, name, numpy.load(path))
                else:
                    with open(path, "rb") as f:
                        rt.set_input(batch, name, f.read())
            if not args.input:
                random_inputs(rt, batch, args.seed)
            rt.run(batch)
            for name in rt.outputs:
                y = rt.get_output(batch, name)
                if args.output_dir:
                    os.makedirs(args.output_dir, exist_ok=True)
                    path = os.path.join(args.output_dir, f"{name}.b{batch}")
                    if numpy is not None and not isinstance(y, bytes):
                        with atomic_open(path + ".npy", "wb") as f:
                            numpy.save(f, y)
                    else:
                        with atomic_open(path + ".bin", "wb") as f:
                            f.write(y)
                summary = (f"shape {list(y.shape)}, mean |y| {float(abs(y.astype('float32')).mean()):.4g}"
                           if not isinstance(y, bytes) else f"{len(y)} bytes")
                print(f"batch {batch}: {name}: {summary}")


def cmd_bench(args):
    with open_runtime(args) as rt:
        print(f"{args.artifact}: runs {rt.chip}", file=sys.stderr)
        from .runtime import random_inputs
        results = []
        batches = [args.batch] if args.batch else rt.plan_batches()
        with Progress("benchmarking", total=len(batches)) as progress:
            for i, batch in enumerate(batches):
                random_inputs(rt, batch, args.seed)
                results.append(rt.benchmark(batch, iterations=args.iterations,
                                            warmup=args.warmup))
                progress.update(i + 1)
        for r in results:
            print(f"batch {r['batch']}: median {r['median_us']:.1f} us "
                  f"(min {r['min_us']:.1f}, max {r['max_us']:.1f}, {r['iterations']} runs; "
                  "host-timed qfuse_run; qfuse-bench measures with CUDA graphs and "
                  "rotating weights)")
        if args.json:
            write_json(args.json, {"artifact": args.artifact, "chip": rt.chip,
                                   "results": results},
                       trailing_newline=False, indent=2)


def add_run_parsers(sub):
    """The `run` and `bench` commands' options."""
    for name, fn, text in (("run", cmd_run, "run an artifact on the GPU"),
                           ("bench", cmd_bench, "time an artifact on the GPU")):
        s = sub.add_parser(name, help=text)
        s.add_argument("artifact")
        s.add_argument("--device", type=int, default=0)
        s.add_argument("--batch", type=int, help="one batch size (default: every plan)")
        s.add_argument("--weights", help="qfuse-packed safetensors (default: random weights)")
        s.add_argument("--seed", type=int, default=1234)
        if name == "run":
            s.add_argument("--input", action="append", metavar="NAME=FILE",
                           help="input buffer from .npy or raw bytes (default: random)")
            s.add_argument("--output-dir")
        else:
            s.add_argument("--iterations", type=int, default=20)
            s.add_argument("--warmup", type=int, default=3)
            s.add_argument("--json")
        s.set_defaults(func=fn)
