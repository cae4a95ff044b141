#!/usr/bin/env bash
# Runs fuzz targets for $1 seconds each (default 60), one after another, each corpus seeded from the fixtures:
# the targets named after $1, or every target. A summary line per target goes to corpus/summary.txt.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
targets=${*:-$(cargo fuzz list)}
fixtures=../crates/ftlsim-core/tests/fixtures
export RUSTC_BOOTSTRAP=1
for target in $targets; do
    corpus=corpus/$target
    mkdir -p "$corpus"
    case $target in
        # One seed per format (its first line names it) from every tiny.<format> fixture, and one per line.
        read_trace) for fixture in "$fixtures"/tiny.*; do
                        fmt=${fixture##*/tiny.}
                        { echo "$fmt"; cat "$fixture"; } > "$corpus/seed-$fmt"
                        n=0; while IFS= read -r line; do n=$((n + 1)); printf '%s\n%s\n' "$fmt" "$line" > "$corpus/seed-$fmt-line-$n"; done < "$fixture"
                    done ;;
        parse_config) for scheme in fast bast page tiny dftl; do
                          printf '{"ftl": "%s", "params": {}, "capacity": "8MiB", "nvram": "64KiB"}' "$scheme" > "$corpus/seed-$scheme"
                      done
                      printf '{"ftl": "fast", "params": {"log_blocks": 8}, "preset": "lee2007", "device": {"page_bytes": 2048}}' > "$corpus/seed-device" ;;
        parse_size) for s in 34MiB "16 GB" 1.5KiB 18446744073709551615 16777216TiB; do printf '%s' "$s" > "$corpus/seed-$s"; done ;;
    esac
    cargo fuzz run "$target" "$corpus" -- -max_total_time="$secs" -max_len=4096 -rss_limit_mb=1024 2>&1 | tee "corpus/$target.log" | grep -E '^(Done|==|INFO: seed)|panicked|SUMMARY' || true
    echo "$target $secs s: $(grep -E '^Done' "corpus/$target.log" | tail -1) $(grep -c 'SUMMARY' "corpus/$target.log") crashes" >> corpus/summary.txt
done
