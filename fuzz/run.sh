#!/usr/bin/env bash
# Runs every fuzz target for $1 seconds (default 60), one after another, each corpus seeded from the fixtures.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
fixtures=../crates/ftlsim-core/tests/fixtures
export RUSTC_BOOTSTRAP=1
for target in $(cargo fuzz list); do
    corpus=corpus/$target
    mkdir -p "$corpus"
    case $target in
        read_*) fmt=${target#read_}; cp "$fixtures/tiny.$fmt" "$corpus/seed-file"
                n=0; while IFS= read -r line; do n=$((n + 1)); printf '%s\n' "$line" > "$corpus/seed-line-$n"; done < "$fixtures/tiny.$fmt" ;;
        parse_size) for s in 34MiB "16 GB" 1.5KiB 18446744073709551615 16777216TiB; do printf '%s' "$s" > "$corpus/seed-$s"; done ;;
    esac
    cargo fuzz run "$target" "$corpus" -- -max_total_time="$secs" -max_len=4096 -rss_limit_mb=1024 2>&1 | tee "corpus/$target.log" | grep -E '^(Done|==|INFO: seed)|panicked|SUMMARY' || true
done
