"""Request helpers and constants of the work-economy tests (their fixtures are in conftest.py)."""

from __future__ import annotations

from typing import Any

ITEM = "paint_interior_wall_l"  # priced per L
SHOP = "localshop"
MEDIAN_CENTS_PER_L = 1500


def observation(shop: Any, path: str = "ok", **over: Any) -> dict[str, Any]:
    body = {
        "itemKey": ITEM,
        "retailerSlug": SHOP,
        "productName": "Acme Interior Wall Paint 4L",
        "productUrl": f"http://127.0.0.1:{shop.port}/p/{path}",
        "priceCents": 6000,
        "unitPriceCents": 1500,
        "unitPriceUnit": "L",
        "inStock": True,
    }
    return {**body, **over}


async def claim(hub: Any, agent: dict[str, Any], item_key: str | None = ITEM, **extra: Any) -> dict[str, Any]:
    payload = {"itemKey": item_key} if item_key else None
    body = {"workType": "price_observation_mining", "payload": payload, **extra}
    resp = await hub.post("/api/work/claim", json=body, headers=agent["headers"])
    assert resp.status == 200, await resp.text()
    data: dict[str, Any] = (await resp.json())["assignment"]
    return data


async def submit(hub: Any, agent: dict[str, Any], assignment_id: str, submission: Any) -> Any:
    return await hub.post(
        "/api/work/submit",
        json={"assignmentId": assignment_id, "submission": submission},
        headers=agent["headers"],
    )


async def balance(hub: Any, agent: dict[str, Any]) -> int:
    resp = await hub.get("/api/pact/wallet", headers=agent["headers"])
    assert resp.status == 200, await resp.text()
    value: int = (await resp.json())["balance"]
    return value
