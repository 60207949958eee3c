"""The personal-data masker on adversarial text, 100 KB and 1 MB: one table.

    python bench/masking.py [--sizes 100000,1000000]

Each input is a shape that made the old nets quadratic (issue 25): a run of letters or digits
(the e-mail net tried every start of it), "@"-heavy text, and, with a book of 20,000 names sharing
a first character, a run of that character (the exact net tried every name at every place). The
table shows seconds per input and the ratio of the 1 MB time to the 100 KB time (linear: about
10). Target: every 1 MB input masks in well under a second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.agent.policy.privacy import PiiMasker, PseudonymBook


def names_book() -> PseudonymBook:
    """20,000 three-character names that all start with 王 (and never continue with it)."""
    book = PseudonymBook(kinds={"phone", "bank_card"})
    for number in range(20_000):
        book.numbered("王" + chr(0x4E00 + number % 500) + chr(0x4E00 + number // 500), "姓名")
    return book


SHAPES = {
    "letters": lambda n: "A" * n,
    "digits": lambda n: "1" * n,
    "a@ repeated": lambda n: "a@" * (n // 2),
    "dotted words": lambda n: "a." * (n // 2),
    "@ then letters": lambda n: "a@" + "b" * n,
    "王 run, 20k names": lambda n: "王" * n,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    plain, named = PiiMasker(PseudonymBook(kinds={"phone", "bank_card"}))._compiled(), PiiMasker(names_book())
    named._compiled().mask("warm")  # compiles the exact net once, as a run does
    print(f"{'input':<20}" + "".join(f"{size:>12,} ch" for size in sizes) + f"{'ratio':>9}")
    for shape, make in SHAPES.items():
        masker = named if "names" in shape else plain
        seconds = []
        for size in sizes:
            text = make(size)
            started = time.perf_counter()
            masker.mask(text)
            seconds.append(time.perf_counter() - started)
        ratio = seconds[-1] / seconds[0] if seconds[0] else float("nan")
        print(f"{shape:<20}" + "".join(f"{s:>14.4f} s" for s in seconds)[: 17 * len(sizes)] + f"{ratio:>9.1f}")


if __name__ == "__main__":
    main()
