"""A Hugging Face checkpoint of random fp16 (or bf16) weights, for the GPU
rounds:

    python3 bench/random-checkpoint.py CONFIG.json OUT_DIR [bf16]

transformers builds the model from CONFIG.json on the GPU (seed 0, its own
initialization) and saves it to OUT_DIR in the safetensors layout a user's
checkpoint has."""
import sys
import time

import torch
import transformers

config, out = sys.argv[1], sys.argv[2]
dtype = torch.bfloat16 if sys.argv[3:] == ["bf16"] else torch.float16
start = time.time()
cfg = transformers.AutoConfig.from_pretrained(config)
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
model.save_pretrained(out)
print(f"checkpoint written in {time.time() - start:.1f} s")
