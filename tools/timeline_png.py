"""Draw the engine schedule of one bundled example as a PNG (the README's picture).

    pip install matplotlib          # only this script needs it
    python tools/timeline_png.py nki_softmax docs/timeline_nki_softmax.png

One row per engine / queue, a bar per instruction at its scheduled start, the critical path
outlined.  The times are fastisa's model estimates (see fastisa.schedule).
"""

import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fastisa import cost, examples  # noqa: E402


def main(name: str, path: str) -> None:
    with cost.profiling() as prof:
        examples.run(name)
    sch = prof.schedule
    tracks = sorted({sch.track(s) for s in sch.slots})
    row = {t: i for i, t in enumerate(tracks)}
    crit = {s.index for s in prof.critical_path()}
    colors = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(10, 0.6 * len(tracks) + 1.4), dpi=110)
    for s in sch.slots:
        y = row[sch.track(s)]
        ax.barh(y, s.occupancy_ns / 1000, left=s.start_ns / 1000, height=0.6,
                color=colors(y % 10), edgecolor="black" if s.index in crit else "none",
                linewidth=1.2)
        if s.dur_ns > s.occupancy_ns:  # a DMA's latency beyond its queue occupancy
            ax.barh(y, (s.dur_ns - s.occupancy_ns) / 1000,
                    left=(s.start_ns + s.occupancy_ns) / 1000, height=0.25,
                    color=colors(y % 10), alpha=0.35)
        if s.dur_ns > 0.04 * sch.latency_ns:
            ax.text((s.start_ns + s.occupancy_ns / 2) / 1000, y, s.instruction, ha="center",
                    va="center", fontsize=7)
    ax.set_yticks(range(len(tracks)), tracks)
    ax.invert_yaxis()
    ax.set_xlabel("estimated time (us, model)")
    ax.set_title(textwrap.fill(f"{name}: {prof.latency().ns:,.0f} ns; {prof.verdict()}", 110),
                 fontsize=8)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main(*sys.argv[1:3])
