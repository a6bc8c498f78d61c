"""Exact cart optimisation as a mixed-integer program solved by HiGHS (scipy.optimize.milp).

For each item choose one retailer offering it; pay item prices plus, for each retailer used, its
fulfilment fee, waived when that retailer's basket reaches its free-delivery threshold. All amounts
are integer cents, so the optimum is exact.

Variables: x[i,r] ∈ {0,1} (item i bought at r), u[r] ∈ {0,1} (r used), w[r] ∈ {0,1} (r's fee paid,
only for retailers with a threshold).
  Σ_r x[i,r] = 1                     every item bought once
  x[i,r] − u[r] ≤ 0                  buying at r uses r
  Σ_i c[i,r]·x[i,r] + T_r·w[r] − T_r·u[r] ≥ 0
                                     a used retailer under its threshold pays its fee
  minimise Σ c[i,r]·x[i,r] + Σ_{no threshold} F_r·u[r] + Σ_{threshold} F_r·w[r]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix


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


def solve(costs: list[dict[str, int]], terms: dict[str, Terms]) -> Solution:
    """costs[i][r] = line cost (cents) of item i at retailer r, for the retailers that offer it."""
    if not costs:
        return Solution(0, [])
    for i, offers in enumerate(costs):
        if not offers:
            raise ValueError(f"item {i} has no offer")
    retailers = sorted({r for offers in costs for r in offers})
    r_index = {r: k for k, r in enumerate(retailers)}
    x_vars = [(i, r) for i, offers in enumerate(costs) for r in sorted(offers)]
    n_x = len(x_vars)
    u0 = n_x
    thresholded = [r for r in retailers if terms[r].threshold is not None and terms[r].fee > 0]
    w_index = {r: u0 + len(retailers) + k for k, r in enumerate(thresholded)}
    n = u0 + len(retailers) + len(thresholded)

    c = np.zeros(n)
    for k, (i, r) in enumerate(x_vars):
        c[k] = costs[i][r]
    for r in retailers:
        if r in w_index:
            c[w_index[r]] = terms[r].fee
        else:
            c[u0 + r_index[r]] = terms[r].fee

    rows = len(costs) + n_x + len(thresholded)
    a = lil_matrix((rows, n))
    lb = np.empty(rows)
    ub = np.empty(rows)
    for k, (i, _r) in enumerate(x_vars):
        a[i, k] = 1
    lb[: len(costs)] = 1
    ub[: len(costs)] = 1
    row = len(costs)
    for k, (_i, r) in enumerate(x_vars):
        a[row, k] = 1
        a[row, u0 + r_index[r]] = -1
        lb[row], ub[row] = -np.inf, 0
        row += 1
    for r in thresholded:
        t = terms[r].threshold or 0
        for k, (i, rr) in enumerate(x_vars):
            if rr == r:
                a[row, k] = costs[i][r]
        a[row, w_index[r]] = t
        a[row, u0 + r_index[r]] = -t
        lb[row], ub[row] = 0, np.inf
        row += 1

    result = milp(
        c,
        integrality=np.ones(n),
        bounds=Bounds(0, 1),
        constraints=LinearConstraint(a.tocsr(), lb, ub),
        options={"mip_rel_gap": 0, "presolve": True},
    )
    if result.status != 0 or result.x is None:
        raise RuntimeError(f"solver failed: {result.message}")
    choice = [""] * len(costs)
    for k, (i, r) in enumerate(x_vars):
        if result.x[k] > 0.5:
            choice[i] = r
    # Recompute from the choice in integers: the reported total never carries float noise.
    return evaluate(costs, terms, choice)


def best_single(costs: list[dict[str, int]], terms: dict[str, Terms]) -> Solution | None:
    """The cheapest basket bought entirely at one retailer that offers every item, if any."""
    if not costs:
        return None
    common = set(costs[0]).intersection(*costs[1:])
    options = [evaluate(costs, terms, [r] * len(costs)) for r in sorted(common)]
    return min(options, key=lambda s: (s.total, s.choice[0]), default=None)
