"""Cart optimisation benchmark: 50 items across 20 retailers, solved exactly by HiGHS.

Run: .venv/bin/python -m bench.cart [--instances N] [--items 50] [--retailers 20]
Each instance has random prices (80% availability), fees and free-delivery thresholds; the MILP is
solved to a zero optimality gap. Prints the solve time per instance and the worst case.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from domain.market.cart_solver import Terms, best_single, solve


def instance(rng: random.Random, items: int, retailers: int) -> tuple[list[dict[str, int]], dict[str, Terms]]:
    names = [f"retailer-{k:02d}" for k in range(retailers)]
    terms = {
        r: Terms(fee=rng.randint(0, 2500), threshold=rng.choice([None, rng.randint(5_000, 30_000)]))
        for r in names
    }
    costs = []
    for _ in range(items):
        base = rng.randint(150, 8000)
        offers = {
            r: int(base * rng.uniform(0.8, 1.25)) * rng.randint(1, 3) for r in names if rng.random() < 0.8
        }
        costs.append(offers or {names[0]: base})
    return costs, terms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instances", type=int, default=10)
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--retailers", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    solve(*instance(rng, 3, 2))  # warm-up: imports and the HiGHS library load
    times = []
    for k in range(args.instances):
        costs, terms = instance(rng, args.items, args.retailers)
        started = time.perf_counter()
        solution = solve(costs, terms)
        elapsed = time.perf_counter() - started
        times.append(elapsed)
        single = best_single(costs, terms)
        used = len(solution.subtotals)
        print(
            f"instance {k + 1}: {args.items} items x {args.retailers} retailers, optimal total "
            f"{solution.total / 100:.2f} AUD using {used} retailer(s)"
            + (f", best single {single.total / 100:.2f}" if single else "")
            + f" - solved exactly in {elapsed * 1000:.1f} ms"
        )
    print(
        f"median {statistics.median(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms "
        f"over {len(times)} instances"
    )


if __name__ == "__main__":
    main()
