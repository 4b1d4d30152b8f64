#!/usr/bin/env python3
"""One line of a run's stages from its manifest: wall time, bands, the stages of the migration and, for a
run over several ranks, each rank's time, frequencies and the load imbalance.

    scripts/stage_summary.py LABEL OUTPUT/manifest.json
"""
import json
import sys

label, path = sys.argv[1], sys.argv[2]
m = json.load(open(path))
st = m["stages"]
s = {x["name"]: x for x in st["stages"]}


def t(name):
    return s.get(name, {}).get("seconds", 0.0)


def gb(name):
    return s.get(name, {}).get("bytes", 0) / 1e9


line = (
    f"{label}: wall {m['wall_seconds']:.3f} s, bands {st['frequency_bands']}, ingest {t('ingest'):.3f} s, "
    f"band-store {t('band-store'):.3f} s, band-load {t('band-load'):.3f} s ({gb('band-load'):.2f} GB), spill {gb('spill'):.2f} GB, "
    f"migrate {t('migrate'):.3f} s, ingest+compute {t('ingest+compute'):.3f} s, exchange {t('exchange'):.3f} s (+ placing {t('exchange-place'):.3f} s), "
    f"rank-sum {t('rank-sum'):.3f} s, h2d {st['host_to_device_bytes'] / 1e9:.2f} GB"
)
if "nccl-setup" in s:
    rate = gb("exchange") / t("exchange") if t("exchange") > 0 else 0.0
    line += (
        f", engine-setup {t('engine-setup'):.3f} s, engine-wait {t('engine-wait'):.3f} s, "
        f"nccl-setup {t('nccl-setup'):.3f} s, exchanged {gb('exchange'):.2f} GB ({rate:.0f} GB/s of exchange time)"
    )
d = st.get("distributed")
if d:
    line += f", imbalance {d['imbalance']:.2f}, ranks " + " ".join(
        f"{p['index']}:{p['seconds']:.2f}s/{p['frequencies'][1] - p['frequencies'][0]}f" for p in d["parts"]
    )
print(line)
