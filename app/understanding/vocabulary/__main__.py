"""`python -m app.understanding.vocabulary count [--total | --json]`: the hand-written vocabulary, counted."""

import sys

from app.understanding.vocabulary.count import main

if __name__ == "__main__":
    if sys.argv[1:2] != ["count"]:
        print("usage: python -m app.understanding.vocabulary count [--total | --json]", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[2:]))
