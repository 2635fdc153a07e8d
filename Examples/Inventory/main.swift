// An inventory service on two replicas in one process: a warehouse that listens on 127.0.0.1 (a port the
// system picks) and a shop that dials it with a token. It keeps typed records, takes 2 × 500 concurrent
// restocking increments, reserves stock with transactions that must not oversell, races both replicas
// for the same items, records a sale as one batch, follows the stock with a callback subscription and a
// Combine publisher, then shuts down and reopens both files. Every step checks what it promises; the
// program exits with status 1 when a check fails.
//
//     swift run Inventory

import Foundation
import Weft

// MARK: - Records

struct Item: Codable, Sendable, Equatable {
    var name: String
    var priceCents: Int
    /// Often empty: the tree keeps no empty array, and decoding reads the missing key back as `[]`.
    var tags: [String]
}

struct Sale: Codable, Sendable, Equatable {
    var item: String
    var units: Int
    var shop: String
}

// MARK: - Reserving and converging

/// Reserves `units` of a stock unless fewer are left. On a replica that syncs, `runTransaction` reports
/// `committed` only once the outcome can no longer change (it waits for `.stable` by default), so a
/// reservation it reports is never undone by a peer's earlier write.
func reserve(_ units: Int64, of stock: DataNode) async throws -> TransactionResult {
    try await stock.runTransaction { current in
        guard let left = current.intValue, left >= units else { return .abort }
        return .set(.int(left - units))
    }
}

/// Waits until the two replicas hold the same state: each has every write acknowledged and holds what
/// its peer holds.
func waitUntilConverged(_ warehouse: Replica, _ shop: Replica) async throws {
    try await warehouse.waitUntilSynced(timeout: .seconds(30))
    try await shop.waitUntilSynced(timeout: .seconds(30))
    try check(warehouse.digest == shop.digest, "both replicas hold the same state")
}

// MARK: - Checks and waits

struct CheckFailed: Error, CustomStringConvertible {
    let description: String
}

/// Fails the run unless `condition` holds.
func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
    guard condition else { throw CheckFailed(description: what()) }
    print("  ok: \(what())")
}

/// Polls `condition` every 20 ms for at most 30 s.
func poll(_ what: String, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        if try condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw CheckFailed(description: "timed out waiting for \(what)")
}

/// A value several threads update: what the subscriptions saw.
final class Tally: @unchecked Sendable {
    // Sendable: fields are guarded by `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var values: [String: Value] = [:]

    func note(_ key: String, _ value: Value) {
        lock.withLock {
            counts[key, default: 0] += 1
            values[key] = value
        }
    }

    func count(_ key: String) -> Int { lock.withLock { counts[key, default: 0] } }
    func last(_ key: String) -> Value? { lock.withLock { values[key] } }
}

// MARK: - The run

let token = "the inventory example's shared secret"
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weft-inventory-\(getpid())")
let warehousePath = directory.appendingPathComponent("warehouse.sqlite").path
let shopPath = directory.appendingPathComponent("shop.sqlite").path

func run() async throws {
    Replica.logLevel = .warning  // the sync connection and session lines stay quiet
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    print("1. open two replicas: the warehouse listens, the shop dials it")
    let warehouse = try Replica.open(at: warehousePath)
    var hub = ReplicaSyncOptions()
    hub.role = .hub
    try warehouse.configureSync(hub)
    let port = try await warehouse.listen(on: "127.0.0.1:0", token: token)
    let shop = try Replica.open(at: shopPath)
    try await shop.connect(to: "127.0.0.1:\(port)", token: token, waitUntilConnected: .seconds(30))
    // The shop's side is connected once `connect` returns; the warehouse records the session a moment later.
    try await poll("the warehouse to see the shop") { warehouse.syncStatus.connectedCount == 1 }
    try check(warehouse.syncStatus.connectedCount == 1, "the warehouse on port \(port) sees the shop")

    let items = try warehouse.node(at: "/inventory/items")
    let stock = try warehouse.node(at: "/inventory/stock")
    let shopStock = try shop.node(at: "/inventory/stock")

    print("2. typed records written at the warehouse read back, decoded, at the shop")
    let catalog = [
        "widget": Item(name: "Widget", priceCents: 250, tags: ["metal", "small"]),
        "gadget": Item(name: "Gadget", priceCents: 1999, tags: []),
        "gizmo": Item(name: "Gizmo", priceCents: 799, tags: ["new"]),
    ]
    try await items.set(catalog)
    try await stock.set(["widget": 100, "gadget": 5, "gizmo": 40])
    try await waitUntilConverged(warehouse, shop)
    let seen = try await shop.node(at: "/inventory/items").decodedValue(as: [String: Item].self)
    try check(seen == catalog, "the shop decodes the 3 items, the gadget's empty tags included")

    print("3. subscriptions: child events at the shop, a Combine publisher at the warehouse")
    let events = Tally()
    let childEvents = shopStock.subscribe(to: .childChange) { event in
        events.note(event.node.key ?? "", event.value)
    }
    let published = Tally()
    let widgetPublisher = try stock.child("widget").publisher(queue: .main).sink { event in
        published.note("widget", event.value)
    }
    try await poll("the publisher's first value") { published.count("widget") >= 1 }
    try check(published.last("widget") == 100, "the publisher starts with the widget stock, 100")

    print("4. 2 × 500 concurrent restocking increments, with a 30-unit reservation in the middle")
    let shopWidget = try shopStock.child("widget")
    let warehouseWidget = try stock.child("widget")
    let reservation = try await withThrowingTaskGroup(of: TransactionResult?.self) { group in
        for (replicaWidget, count) in [(warehouseWidget, 500), (shopWidget, 500)] {
            group.addTask {
                try await withThrowingTaskGroup(of: Void.self) { increments in
                    for _ in 0..<count { increments.addTask { _ = try await replicaWidget.increment(by: 1) } }
                    try await increments.waitForAll()
                }
                return nil
            }
        }
        group.addTask {
            try await Task.sleep(for: .milliseconds(5))
            return try await reserve(30, of: shopWidget)
        }
        var reservation: TransactionResult?
        for try await result in group where result != nil { reservation = result }
        return reservation
    }
    guard let reservation else { throw CheckFailed(description: "the reservation gave no result") }
    print("  reservation: \(reservation)")
    try await waitUntilConverged(warehouse, shop)
    let reserved: Int64 = reservation.isCommitted ? 30 : 0
    let widgetsAtWarehouse = try await warehouseWidget.value()
    let widgetsAtShop = try await shopWidget.value()
    try check(widgetsAtWarehouse == .int(100 + 1_000 - reserved), "the warehouse holds \(widgetsAtWarehouse) widgets")
    try check(widgetsAtShop == widgetsAtWarehouse, "the shop holds as many")
    if let receipt = reservation.receipt {
        try check(receipt.status == .stable, "the committed reservation stayed committed: \(receipt.status)")
    }

    print("5. both replicas race for 3 of the 5 gadgets")
    async let warehouseTry = reserve(3, of: try stock.child("gadget"))
    async let shopTry = reserve(3, of: try shopStock.child("gadget"))
    let racers = try await [warehouseTry, shopTry]
    for (name, result) in zip(["warehouse", "shop"], racers) { print("  \(name): \(result)") }
    try check(racers.count(where: \.isCommitted) == 1, "exactly one racer committed")
    try await waitUntilConverged(warehouse, shop)
    try check(try await stock.child("gadget").value() == 2, "2 gadgets are left at the warehouse")
    try check(try await shopStock.child("gadget").value() == 2, "and at the shop")
    for result in racers {
        if let receipt = result.receipt { try check(receipt.status == .stable, "the winner is stable") }
    }

    print("6. a sale at the shop, as one batch: stock, sale record and counter together")
    let sales = try shop.node(at: "/inventory/sales")
    let saleCount = try shop.node(at: "/inventory/counters/sales")
    let sale = Sale(item: "gizmo", units: 2, shop: "rue de la Paix")
    try await shop.performChanges { batch in
        try batch.increment(by: -2, at: shopStock.child("gizmo"))
        try batch.push(sale, under: sales)
        try batch.increment(by: 1, at: saleCount)
    }
    try await waitUntilConverged(warehouse, shop)
    let salesAtWarehouse = try await warehouse.node(at: "/inventory/sales").decodedValue(as: [String: Sale].self)
    try check(Array(salesAtWarehouse.values) == [sale], "the warehouse has the sale record")
    try check(try await stock.child("gizmo").value() == 38, "and 38 gizmos left")
    try check(try await warehouse.node(at: "/inventory/counters/sales").value() == 1, "and a sales count of 1")

    print("7. what the subscriptions saw")
    try await poll("the last child events") { events.last("gizmo") == 38 && events.last("gadget") == 2 }
    try check(events.count("widget") >= 1, "the shop saw \(events.count("widget")) widget stock changes")
    try check(events.last("widget") == widgetsAtShop, "its last widget event is the final stock")
    try await poll("the publisher's last value") { published.last("widget") == widgetsAtWarehouse }
    try check(published.count("widget") >= 2, "the publisher delivered \(published.count("widget")) values")
    childEvents.invalidate()
    widgetPublisher.cancel()

    print("8. shut down both replicas and reopen their files")
    let digests = (warehouse.digest, shop.digest)
    let stateBefore = warehouse.snapshot()
    await shop.shutdown()
    await warehouse.shutdown()
    let warehouseAgain = try Replica.open(at: warehousePath)
    let shopAgain = try Replica.open(at: shopPath)
    try await warehouseAgain.waitUntilLoaded()
    try await shopAgain.waitUntilLoaded()
    try check(warehouseAgain.digest == digests.0 && shopAgain.digest == digests.1, "both files kept their state")
    try check(shopAgain.snapshot() == stateBefore, "the shop's file holds what the warehouse held")
    let itemsAgain = try await shopAgain.node(at: "/inventory/items").decodedValue(as: [String: Item].self)
    try check(itemsAgain == catalog, "the typed records decode after the restart")
    await shopAgain.shutdown()
    await warehouseAgain.shutdown()
}

do {
    try await run()
    print("all checks passed")
} catch {
    print("FAILED: \(error)")
    exit(1)
}
