"""Exact cart optimisation as a mixed-integer program solved by HiGHS (scipy.optimize.milp).

For each item choose one retailer offering it; pay item prices plus, for each retailer used, its
fulfilment fee, waived when that retailer's basket reaches its free-delivery threshold. All amounts
are integer cents, so the optimum is exact.

Variables: x[i,r] ∈ {0,1} (item i bought at r), u[r] ∈ {0,1} (r used), w[r] ∈ {0,1} (r's fee paid,
only for retailers with a threshold and a fee).
  Σ_r x[i,r] = 1                                   every item bought once
  x[i,r] − u[r] ≤ 0                                buying at r uses r
  Σ_j c[j,r]·x[j,r] + T_r·w[r] − T_r·u[r] ≥ 0      a used retailer under its threshold pays its fee
  minimise Σ c[i,r]·x[i,r] + Σ_{no threshold} F_r·u[r] + Σ_{threshold} F_r·w[r]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and SciPy load at the first solve (start-up cost of every process otherwise)
    from scipy.optimize import LinearConstraint


@dataclass(frozen=True)
class Terms:
    fee: int  # cents
    threshold: int | None = None  # fee waived when the basket subtotal reaches this (cents)


@dataclass
class Solution:
    total: int
    choice: list[str]  # retailer per item
    fees: dict[str, int] = field(default_factory=dict)
    subtotals: dict[str, int] = field(default_factory=dict)


def fee_for(terms: Terms, subtotal: int) -> int:
    if terms.threshold is not None and subtotal >= terms.threshold:
        return 0
    return terms.fee


def evaluate(costs: list[dict[str, int]], terms: dict[str, Terms], choice: list[str]) -> Solution:
    subtotals: dict[str, int] = {}
    for i, r in enumerate(choice):
        subtotals[r] = subtotals.get(r, 0) + costs[i][r]
    fees = {r: fee_for(terms[r], s) for r, s in subtotals.items()}
    return Solution(sum(subtotals.values()) + sum(fees.values()), list(choice), fees, subtotals)


class _Rows:
    """Sparse constraint rows collected as coordinates (fast to build, handed to HiGHS as CSR)."""

    def __init__(self) -> None:
        self.r: list[int] = []
        self.c: list[int] = []
        self.v: list[float] = []
        self.lb: list[float] = []
        self.ub: list[float] = []

    def add(self, coefs: list[tuple[int, float]], lb: float, ub: float) -> None:
        row = len(self.lb)
        for col, val in coefs:
            self.r.append(row)
            self.c.append(col)
            self.v.append(val)
        self.lb.append(lb)
        self.ub.append(ub)

    def constraint(self, n: int) -> LinearConstraint:
        # Deferred: importing numpy and SciPy costs a process ~0.2 s of CPU at start-up (solve only).
        import numpy as np
        from scipy.optimize import LinearConstraint
        from scipy.sparse import coo_matrix

        coords = (np.array(self.r, dtype=np.intp), np.array(self.c, dtype=np.intp))
        a = coo_matrix((np.array(self.v), coords), shape=(len(self.lb), n)).tocsr()
        return LinearConstraint(a, np.array(self.lb), np.array(self.ub))


def solve(costs: list[dict[str, int]], terms: dict[str, Terms]) -> Solution:
    """costs[i][r] = line cost (cents) of item i at retailer r, for the retailers that offer it."""
    if not costs:
        return Solution(0, [])
    for i, offers in enumerate(costs):
        if not offers:
            raise ValueError(f"item {i} has no offer")
    # Deferred: importing numpy and SciPy costs a process ~0.2 s of CPU at start-up (solve only).
    import numpy as np
    from scipy.optimize import Bounds, milp

    full = costs
    costs = [_undominated(offers, terms) for offers in costs]
    retailers = sorted({r for offers in costs for r in offers})
    x_vars = [(i, r) for i, offers in enumerate(costs) for r in sorted(offers)]
    u = {r: len(x_vars) + k for k, r in enumerate(retailers)}
    thresholded = [r for r in retailers if terms[r].threshold is not None and terms[r].fee > 0]
    w = {r: len(x_vars) + len(retailers) + k for k, r in enumerate(thresholded)}
    n = len(x_vars) + len(retailers) + len(thresholded)
    at: dict[str, list[int]] = {r: [] for r in retailers}
    for k, (_i, r) in enumerate(x_vars):
        at[r].append(k)

    c = np.zeros(n)
    for k, (i, r) in enumerate(x_vars):
        c[k] = costs[i][r]
    for r in retailers:
        c[w[r] if r in w else u[r]] = terms[r].fee

    rows = _Rows()
    per_item: list[list[tuple[int, float]]] = [[] for _ in costs]
    for k, (i, _r) in enumerate(x_vars):
        per_item[i].append((k, 1.0))
    for coefs in per_item:
        rows.add(coefs, 1, 1)
    for k, (_i, r) in enumerate(x_vars):
        rows.add([(k, 1.0), (u[r], -1.0)], -np.inf, 0)
    for r in thresholded:
        t = terms[r].threshold or 0
        # An item dearer than the threshold alone counts as the threshold (a valid, tighter coefficient).
        subtotal = [(k, float(min(costs[x_vars[k][0]][r], t))) for k in at[r]]
        rows.add([*subtotal, (w[r], t), (u[r], -t)], 0, np.inf)

    result = milp(
        c,
        integrality=np.ones(n, dtype=np.int_),  # every variable is integral (0/1 by the bounds)
        bounds=Bounds(0, 1),
        constraints=rows.constraint(n),
        options={"mip_rel_gap": _exact_gap(costs, terms), "presolve": True},
    )
    if result.status != 0 or result.x is None:
        raise RuntimeError(f"solver failed: {result.message}")
    choice = [""] * len(costs)
    for k, (i, r) in enumerate(x_vars):
        if result.x[k] > 0.5:
            choice[i] = r
    # Recompute from the choice in integers: the reported total never carries float noise.
    return evaluate(full, terms, choice)


def _undominated(offers: dict[str, int], terms: dict[str, Terms]) -> dict[str, int]:
    """Drop offers that can never beat another one. Moving an item from r to s changes the total by at
    most c_s − c_r + F_s (s may start paying its fee) + F_r (r may fall below its threshold), so an
    offer with c_r ≥ c_s + F_s + F_r (F_r only if r has a threshold) can be left out without losing
    every optimal solution. This keeps the optimum exact and shrinks the program a lot."""
    best_s = min(offers, key=lambda s: (offers[s] + terms[s].fee, s))
    bound = offers[best_s] + terms[best_s].fee
    kept = {}
    for r, cost in offers.items():
        loss = terms[r].fee if terms[r].threshold is not None else 0
        if r == best_s or cost < bound + loss:
            kept[r] = cost
    return kept


def _exact_gap(costs: list[dict[str, int]], terms: dict[str, Terms]) -> float:
    """A relative gap that still proves optimality: the objective is an integer number of cents, so
    stopping when the incumbent is within 0.999 of the bound leaves no better integer solution."""
    upper = sum(max(o.values()) for o in costs) + sum(t.fee for t in terms.values())
    return 0.999 / max(1, upper)


def best_single(costs: list[dict[str, int]], terms: dict[str, Terms]) -> Solution | None:
    """The cheapest basket bought entirely at one retailer that offers every item, if any."""
    if not costs:
        return None
    common = set(costs[0]).intersection(*costs[1:])
    options = [evaluate(costs, terms, [r] * len(costs)) for r in sorted(common)]
    return min(options, key=lambda s: (s.total, s.choice[0]), default=None)
