"""Pydantic models of the market endpoints: requests, and the responses /openapi.json documents and the
tests check every real body against."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from domain.kernel.clock import iso
from domain.kernel.vocabulary import SpeltOut
from domain.market import cart, catalog, fuel, scrape
from domain.market.cart_records import CartLine, CartRequest
from domain.market.fuel import AustralianState, FuelType
from domain.market.models import CartOptimisation, FuelCurrentPrice, ProductTier, QuoteCategory
from domain.market.models import FuelStation as MarketFuelStation
from domain.market.units import QuoteUnit
from web.hub.schemas import Model as HubModel
from web.kernel.wire import HAS_ASCII_ALNUM, Text, Timestamp


class Model(HubModel):
    @field_validator("*", mode="after")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        # PostgreSQL cannot store or compare NUL in text: refuse it as bad input, never a 500 later.
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("must not contain NUL (\\u0000) characters")
        if isinstance(value, list) and any(isinstance(v, str) and "\x00" in v for v in value):
            raise ValueError("must not contain NUL (\\u0000) characters")
        return value


class ProductSearchQuery(Model):
    query: Annotated[str, HAS_ASCII_ALNUM] = Field(
        min_length=1, max_length=200, description="Words that must all appear (required)."
    )
    category: str | None = Field(default=None, max_length=40, description="Category filter, e.g. paint.")
    limit: int = Field(default=20, ge=1, le=100, description="1 to 100 (default 20).")


class CompareQuery(Model):
    productId: Text = Field(min_length=1, max_length=36, description="Product to compare across retailers.")
    includeDelivery: bool = Field(default=False, description="Add each retailer's delivery fee.")


class ProductHistoryQuery(Model):
    productId: Text = Field(min_length=1, max_length=36)
    days: int = Field(default=30, ge=1, le=365, description="1 to 365 (default 30).")


class CartItem(Model):
    query: Annotated[str, HAS_ASCII_ALNUM] = Field(min_length=1, max_length=200)
    quantity: int = Field(ge=1, le=1000)


class CartBody(Model):
    items: list[CartItem] = Field(min_length=1, max_length=cart.MAX_ITEMS)
    preferPickup: bool = False

    def command(self) -> CartRequest:
        return CartRequest(tuple(CartLine(i.query, i.quantity) for i in self.items), self.preferPickup)


class CartBasketItem(BaseModel):
    query: str
    quantity: int
    productId: str
    productName: str
    productUrl: str
    unitPrice: float | None
    lineTotal: float
    observedAt: Timestamp | None
    stale: bool


class RetailerTotals(BaseModel):
    retailer: str
    retailerName: str
    fulfilment: str = Field(description="delivery or pickup")
    subtotal: float
    fee: float
    total: float


class CartBasket(RetailerTotals):
    items: list[CartBasketItem]


class UnmatchedItem(BaseModel):
    query: str
    quantity: int


class CartResult(BaseModel):
    """Pending: id, status, url, createdAt. Done: the solution too. Failed: the error."""

    id: str
    status: Literal["pending", "done", "failed"]
    url: str = Field(description="Where to GET the result")
    createdAt: Timestamp
    error: str | None = Field(default=None, description="Failed only")
    finishedAt: Timestamp | None = Field(default=None, description="Done only")
    preferPickup: bool | None = None
    baskets: list[CartBasket] | None = Field(default=None, description="One per retailer bought from")
    itemsTotal: float | None = None
    feesTotal: float | None = None
    total: float | None = None
    bestSingleRetailer: RetailerTotals | None = Field(
        default=None, description="The cheapest way to buy every matched item at one retailer"
    )
    saving: float | None = Field(default=None, description="Against the best single retailer")
    unmatched: list[UnmatchedItem] | None = None
    matchedItems: int | None = None
    optimal: bool | None = None
    solver: str | None = None
    solveMs: float | None = None

    @staticmethod
    def answer(c: CartOptimisation, url: str) -> dict[str, Any]:
        """The cart as this model's wire dict: a solved cart's result as it was stored (its fields were always
        the stored ones: domain/market/cart_stored.py), a failed one's error; nothing else left as null."""
        body: dict[str, Any] = {"id": c.id, "status": c.status, "url": url, "createdAt": iso(c.created_at)}
        if c.status == "done" and c.result is not None:
            body.update(c.result)
            body["finishedAt"] = iso(c.finished_at)
        elif c.status == "failed":
            body["error"] = c.error
        return body


class UnitPrice(BaseModel):
    price: float
    unit: str


class ScrapeState(BaseModel):
    enabled: bool
    status: str | None
    error: str | None
    lastScrapedAt: Timestamp | None


class Product(BaseModel):
    id: str
    name: str
    brand: str | None
    category: str
    ean: str | None
    url: str
    packSize: float
    packUnit: str
    itemKey: str | None
    tier: str
    retailer: str
    retailerName: str
    price: float | None = Field(description="AUD; null before the first observation")
    unitPrice: UnitPrice | None
    inStock: bool
    pickupAvailable: bool
    observedAt: Timestamp | None
    priceSource: str | None = Field(
        description='Source of the newest price: "crowd" (submitted by an agent through the work economy), '
        '"scrape", "demo", "import", …; null before the first observation'
    )
    stale: bool
    demo: bool
    scrape: ScrapeState

    @staticmethod
    def fields(found: catalog.Listing) -> dict[str, Any]:
        """The listing as this model's wire dict (the market's answers are dicts checked strictly by their
        operation's Shape as they are written: a number goes out as the domain gave it)."""
        product, retailer, up = found.product, found.retailer, found.unit_price
        return {
            "id": product.id,
            "name": product.name,
            "brand": product.brand,
            "category": product.category,
            "ean": product.ean,
            "url": product.url,
            "packSize": product.pack_size,
            "packUnit": product.pack_unit,
            "itemKey": product.item_key,
            "tier": product.tier,
            "retailer": retailer.slug,
            "retailerName": retailer.name,
            "price": catalog.cents(product.price_cents),
            "unitPrice": None if up is None else {"price": up.price, "unit": up.unit},
            "inStock": product.in_stock,
            "pickupAvailable": found.pickup_available,
            "observedAt": iso(product.observed_at),
            "priceSource": product.price_source,
            "stale": found.stale,
            "demo": product.demo,
            "scrape": {
                "enabled": product.scrape_enabled,
                "status": product.scrape_status,
                "error": product.scrape_error,
                "lastScrapedAt": iso(product.last_scraped_at),
            },
        }


class ProductSearch(BaseModel):
    query: str
    category: str | None
    total: int
    results: list[Product] = Field(description="Cheapest first")

    @staticmethod
    def answer(found: catalog.SearchResults) -> dict[str, Any]:
        return {
            "query": found.query,
            "category": found.category,
            "total": found.total,
            "results": [Product.fields(r) for r in found.listings],
        }


class Offer(Product):
    matchedBy: Literal["self", "ean", "name_pack"]
    deliveryFee: float | None = Field(default=None, description="With includeDelivery=true")
    totalWithDelivery: float | None = Field(default=None, description="With includeDelivery=true")

    @staticmethod
    def offer_fields(o: catalog.Offer, include_delivery: bool) -> dict[str, Any]:
        """The offer as this model's wire dict: the delivery fields only when delivery is included."""
        body = {**Product.fields(o.listing), "matchedBy": o.matched_by}
        if include_delivery:
            body["deliveryFee"] = o.delivery_fee
            body["totalWithDelivery"] = o.total_with_delivery
        return body


class Comparison(BaseModel):
    product: Product
    includeDelivery: bool
    offers: list[Offer]
    cheapest: Offer | None = Field(description="The cheapest offer in stock")
    saving: float | None

    @staticmethod
    def answer(c: catalog.Comparison) -> dict[str, Any]:
        def offer(o: catalog.Offer) -> dict[str, Any]:
            return Offer.offer_fields(o, c.include_delivery)

        return {
            "product": Product.fields(c.listing),
            "includeDelivery": c.include_delivery,
            "offers": [offer(o) for o in c.offers],
            "cheapest": None if c.cheapest is None else offer(c.cheapest),
            "saving": c.saving,
        }


class PriceObservation(BaseModel):
    price: float
    unitPrice: float | None
    unit: str | None
    inStock: bool
    source: str
    observedAt: Timestamp
    stale: bool


class ProductHistory(BaseModel):
    product: Product
    days: int
    observations: list[PriceObservation]
    min: float | None
    max: float | None
    average: float | None

    @staticmethod
    def answer(h: catalog.PriceHistory) -> dict[str, Any]:
        return {
            "product": Product.fields(h.listing),
            "days": h.days,
            "observations": [_observation(o) for o in h.observations],
            "min": h.min,
            "max": h.max,
            "average": h.average,
        }


def _observation(found: catalog.Observed) -> dict[str, Any]:
    """A price observation as PriceObservation's wire dict."""
    o = found.observation
    return {
        "price": catalog.cents(o.price_cents),
        "unitPrice": None if o.unit_price_cents is None else round(o.unit_price_cents / 100, 4),
        "unit": o.unit,
        "inStock": o.in_stock,
        "source": o.source,
        "observedAt": iso(o.observed_at),
        "stale": found.stale,
    }


class RetailerCount(BaseModel):
    retailer: str
    name: str
    products: int
    demo: bool


class CategoryCount(BaseModel):
    category: str
    products: int


class CatalogStats(BaseModel):
    retailers: int
    products: int
    pricedProducts: int
    staleProducts: int
    observations: int
    quoteItemKeys: int
    lastObservedAt: Timestamp | None
    demoProducts: int
    byRetailer: list[RetailerCount]
    byCategory: list[CategoryCount]
    generatedAt: Timestamp

    @staticmethod
    def answer(s: catalog.CatalogStats) -> dict[str, Any]:
        return {
            "retailers": s.retailers,
            "products": s.products,
            "pricedProducts": s.priced_products,
            "staleProducts": s.stale_products,
            "observations": s.observations,
            "quoteItemKeys": s.quote_item_keys,
            "lastObservedAt": iso(s.last_observed_at),
            "demoProducts": s.demo_products,
            "byRetailer": [
                {"retailer": r.slug, "name": r.name, "products": r.products, "demo": r.demo}
                for r in s.by_retailer
            ],
            "byCategory": [{"category": c, "products": n} for c, n in s.by_category],
            "generatedAt": iso(s.generated_at),
        }


class ScrapeQueued(BaseModel):
    productId: str
    jobId: str
    status: Literal["queued"]

    @classmethod
    def of(cls, q: scrape.Queued) -> ScrapeQueued:
        return cls(productId=q.product_id, jobId=q.job_id, status="queued")


PRICE_UNIT = "c/L"  # fuel prices are cents per litre


class FuelStation(BaseModel):
    id: str
    brand: str | None
    name: str
    address: str | None
    suburb: str | None
    state: AustralianState
    postcode: str | None
    latitude: float
    longitude: float
    source: str
    demo: bool

    @staticmethod
    def fields(s: MarketFuelStation) -> dict[str, Any]:
        """The station as this model's wire dict (the fuel answers are dicts checked by their operation's
        Shape as they are written)."""
        return {
            "id": s.id,
            "brand": s.brand,
            "name": s.name,
            "address": s.address,
            "suburb": s.suburb,
            "state": s.state,
            "postcode": s.postcode,
            "latitude": s.latitude,
            "longitude": s.longitude,
            "source": s.source,
            "demo": s.demo,
        }


class FuelPrice(BaseModel):
    fuelType: FuelType
    price: float = Field(description="Cents per litre")
    pricedAt: Timestamp

    @staticmethod
    def fields(c: FuelCurrentPrice) -> dict[str, Any]:
        return {"fuelType": c.fuel_type, "price": c.cents_per_litre, "pricedAt": iso(c.priced_at)}


class PricedStation(FuelStation):
    fuelType: FuelType
    price: float = Field(description="Cents per litre")
    priceUnit: Literal["c/L"]
    pricedAt: Timestamp

    @staticmethod
    def priced_fields(s: MarketFuelStation, c: FuelCurrentPrice) -> dict[str, Any]:
        return FuelStation.fields(s) | {
            "fuelType": c.fuel_type,
            "price": c.cents_per_litre,
            "priceUnit": PRICE_UNIT,
            "pricedAt": iso(c.priced_at),
        }


class NearStation(PricedStation):
    distanceKm: float


class NearMe(BaseModel):
    latitude: float
    longitude: float
    fuelType: FuelType
    radiusKm: float
    count: int
    stations: list[NearStation]

    @staticmethod
    def answer(found: fuel.NearMe) -> dict[str, Any]:
        return {
            "latitude": found.latitude,
            "longitude": found.longitude,
            "fuelType": found.fuel_type,
            "radiusKm": found.radius_km,
            "count": len(found.stations),
            "stations": [
                PricedStation.priced_fields(p.station, p.price) | {"distanceKm": p.distance_km}
                for p in found.stations
            ],
        }


class CheapestFuel(BaseModel):
    fuelType: FuelType
    state: AustralianState | None
    stations: list[PricedStation]

    @staticmethod
    def answer(found: fuel.Cheapest) -> dict[str, Any]:
        return {
            "fuelType": found.fuel_type,
            "state": found.state,
            "stations": [PricedStation.priced_fields(p.station, p.price) for p in found.stations],
        }


class FoundStation(FuelStation):
    fuelType: FuelType | None = Field(
        default=None, description="With a fuelType filter: the price of that fuel"
    )
    price: float | None = None
    priceUnit: Literal["c/L"] | None = None
    pricedAt: Timestamp | None = None
    prices: list[FuelPrice] = Field(description="Every current price of the station")


class FuelSearch(BaseModel):
    fuelType: FuelType | None
    state: AustralianState | None
    suburb: str | None
    count: int
    stations: list[FoundStation]

    @staticmethod
    def answer(found: fuel.StationSearch) -> dict[str, Any]:
        def station(f: fuel.Found) -> dict[str, Any]:
            s, c = f.station, f.price
            item = PricedStation.priced_fields(s, c) if c is not None else FuelStation.fields(s)
            return item | {"prices": [FuelPrice.fields(p) for p in f.prices]}

        return {
            "fuelType": found.fuel_type,
            "state": found.state,
            "suburb": found.suburb,
            "count": len(found.stations),
            "stations": [station(f) for f in found.stations],
        }


class FuelTypeSummary(BaseModel):
    fuelType: FuelType
    stations: int
    min: float
    max: float
    average: float
    latestPricedAt: Timestamp | None


class StateSummary(BaseModel):
    state: AustralianState
    stations: int
    fuelTypes: list[FuelTypeSummary]


class FuelSummary(BaseModel):
    state: AustralianState | None
    states: list[StateSummary]
    priceUnit: Literal["c/L"]
    generatedAt: Timestamp

    @staticmethod
    def answer(found: fuel.FuelSummary) -> dict[str, Any]:
        def fuel_type(f: fuel.FuelTypeSummary) -> dict[str, Any]:
            return {
                "fuelType": f.fuel_type,
                "stations": f.stations,
                "min": f.min,
                "max": f.max,
                "average": f.average,
                "latestPricedAt": iso(f.latest_priced_at),
            }

        states = [
            {"state": st.state, "stations": st.stations, "fuelTypes": [fuel_type(f) for f in st.fuel_types]}
            for st in found.states
        ]
        return {
            "state": found.state,
            "states": states,
            "priceUnit": PRICE_UNIT,
            "generatedAt": iso(found.generated_at),
        }


class StationDetail(FuelStation):
    prices: list[FuelPrice]

    @staticmethod
    def answer(found: fuel.StationPrices) -> dict[str, Any]:
        return FuelStation.fields(found.station) | {"prices": [FuelPrice.fields(p) for p in found.prices]}


class FuelHistoryEntry(FuelPrice):
    source: str


class StationHistory(BaseModel):
    station: FuelStation
    fuelType: FuelType | None
    days: int
    history: list[FuelHistoryEntry]

    @staticmethod
    def answer(found: fuel.StationHistory) -> dict[str, Any]:
        history = [
            {
                "fuelType": p.fuel_type,
                "price": p.cents_per_litre,
                "pricedAt": iso(p.priced_at),
                "source": p.source,
            }
            for p in found.history
        ]
        return {
            "station": FuelStation.fields(found.station),
            "fuelType": found.fuel_type,
            "days": found.days,
            "history": history,
        }


class NearMeQuery(Model):
    latitude: float = Field(ge=-90, le=90, allow_inf_nan=False, description="Required, -90 to 90.")
    longitude: float = Field(ge=-180, le=180, allow_inf_nan=False, description="Required, -180 to 180.")
    fuelType: FuelType = Field(default=FuelType.U91, description="Default U91.")
    radiusKm: float = Field(default=10, gt=0, le=200, allow_inf_nan=False, description="Default 10.")
    limit: int = Field(default=20, ge=1, le=100)


class CheapestQuery(Model):
    fuelType: FuelType = Field(default=FuelType.U91, description="Default U91.")
    state: AustralianState | None = Field(default=None, description="Only stations in this state.")
    limit: int = Field(default=10, ge=1, le=100)


class FuelSearchQuery(Model):
    fuelType: FuelType | None = Field(default=None, description="Only stations selling this fuel.")
    state: AustralianState | None = Field(default=None, description="Only stations in this state.")
    suburb: str | None = Field(default=None, max_length=120)
    limit: int = Field(default=20, ge=1, le=100)


class FuelSummaryQuery(Model):
    state: AustralianState | None = Field(default=None, description="Only this state.")


class FuelHistoryQuery(Model):
    stationId: Text = Field(min_length=1, max_length=80)
    fuelType: FuelType | None = Field(default=None, description="Only this fuel's prices.")
    days: int = Field(default=30, ge=1, le=365)


# One to 64 item keys, separated by commas and optional spaces.
ITEM_KEYS = r"^ *[a-z0-9_]{1,80}(?: *, *[a-z0-9_]{1,80}){0,63} *$"


class QuoteRatesQuery(Model):
    items: str | None = Field(
        default=None,
        max_length=64 * 81,
        description="1 to 64 comma-separated item keys (required; /api/market/quote-rates/items lists them).",
        # Item keys are lower-case letters, digits and underscores (domain/data/market/quote_items.json), so
        # every key the operation can accept matches; the form also keeps the request line within aiohttp's
        # 8190 bytes once percent-encoded.
        json_schema_extra={"pattern": ITEM_KEYS, "x-required": True},
    )


class QuoteRateObservation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    retailer: str
    retailer_name: str
    rate_aud: float = Field(description="Per-unit rate in AUD for the item key's canonical unit.")
    price_aud: float = Field(description="Raw product price in AUD.")
    product_id: str
    product_name: str
    product_url: str = Field(json_schema_extra={"format": "uri"})
    observed_at: str = Field(json_schema_extra={"format": "date-time"})
    stale: bool = Field(description="True when the observation is older than 7 days.")
    tier: Annotated[ProductTier, SpeltOut(ProductTier)]
    source: str | None = Field(
        description='Where the price came from: "crowd" for a price an agent submitted through the work '
        'economy, else the source as recorded ("scrape", "demo", "import", …). An addition to the spec\'s '
        "shape; null only for a price recorded before sources were kept."
    )


class QuoteRateEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    unit: Annotated[QuoteUnit, SpeltOut(QuoteUnit)]
    description: str
    category: Annotated[QuoteCategory, SpeltOut(QuoteCategory)]
    cheapest: QuoteRateObservation | None
    observations: list[QuoteRateObservation]


class QuoteRatesResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rates: dict[str, QuoteRateEntry]
    missing: list[str] = Field(description="Item keys with no current observation.")
    generated_at: str = Field(json_schema_extra={"format": "date-time"})


class QuoteItem(BaseModel):
    key: str
    unit: Annotated[QuoteUnit, SpeltOut(QuoteUnit)]
    description: str
    category: Annotated[QuoteCategory, SpeltOut(QuoteCategory)]


class QuoteItems(BaseModel):
    items: list[QuoteItem]
