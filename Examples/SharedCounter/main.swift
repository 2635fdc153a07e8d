// A shared counter on two replicas that work offline, then meet.
//
// Each replica counts visits with `increment` from several tasks (concurrent increments all count) and
// raises a "best day" mark with a transaction. Then the replicas exchange the ops the other lacks, as a
// sync session would, and both hold the exact sum.
//
//     swift run SharedCounter

import Foundation
@_spi(Engine) import Weft
import WeftCore

/// Sends `target` every op of `source` it lacks, origin by origin, in sequence order.
func deliver(from source: Replica, to target: Replica) throws {
    let known = target.versionVector
    for origin in source.versionVector.entries.keys {
        var after = known[origin]
        while true {
            let ops = source.ops(from: origin, after: after, limit: 256)
            guard let last = ops.last else { break }
            try target.applyRemote(ops)
            after = last.sequence
        }
    }
}

/// Counts `visits` visits on `replica`, from four tasks at once, then waits until they are durable.
func count(visits: Int, on replica: Replica) async throws {
    guard let counter = replica.node(for: "/stats/visits") else { return }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<4 {
            group.addTask { for _ in 0..<(visits / 4) { _ = try await counter.increment(waitingFor: .pending) } }
        }
        try await group.waitForAll()
    }
    try await replica.flush()
}

/// Raises the best day to `visits` with a transaction; it never lowers it.
func recordBestDay(_ visits: Int64, on replica: Replica) async throws {
    guard let best = replica.node(for: "/stats/best") else { return }
    let result = try await best.runTransaction { current in
        guard (current.intValue ?? 0) < visits else { return .abort }
        return .set(.int(visits))
    }
    print("best day on this replica: \(result.value) (\(result.isCommitted ? "raised" : "kept"))")
}

/// The value at `path` on `replica`.
func value(_ path: String, on replica: Replica) async throws -> Value {
    try await replica.node(for: path)?.value() ?? .null
}

func run() async throws -> Bool {
    let paris = try Replica.inMemory()
    let lyon = try Replica.inMemory()
    // Paris hears of every change of its counter; it prints the ones merged from Lyon.
    let watch = paris.node(for: "/stats/visits")?.subscribe { event in
        if event.source == .merged { print("paris merged lyon's visits: now \(event.value)") }
    }

    try await count(visits: 400, on: paris)
    try await count(visits: 300, on: lyon)
    try await recordBestDay(400, on: paris)
    try await recordBestDay(300, on: lyon)
    print(
        "offline: paris counts \(try await value("/stats/visits", on: paris)), lyon \(try await value("/stats/visits", on: lyon))"
    )

    // The replicas meet: each learns what the other did.
    try deliver(from: paris, to: lyon)
    try deliver(from: lyon, to: paris)

    let parisStats = try await value("/stats", on: paris)
    let lyonStats = try await value("/stats", on: lyon)
    print("after sync: paris \(parisStats.jsonString()), lyon \(lyonStats.jsonString())")
    try await Task.sleep(nanoseconds: 50_000_000)  // let the last notifications print
    watch?.invalidate()
    await paris.shutdown()
    await lyon.shutdown()
    return parisStats == lyonStats && parisStats["visits"] == 700 && parisStats["best"] == 400
}

do {
    guard try await run() else {
        print("the replicas did not converge")
        exit(1)
    }
    print("both replicas count 700 visits, best day 400")
} catch {
    print("counter failed: \(error)")
    exit(1)
}
