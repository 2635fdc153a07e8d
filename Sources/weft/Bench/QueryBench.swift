import Foundation
import GRDB
import GRDBSQLite
@_spi(Engine) import Weft
import WeftCore

/// `weft bench query`: a collection of children of five fields each, indexed on one, queried through
/// Weft and through SQLite (GRDB) holding the same rows with a B-tree index on the same field.
///
/// - (a) a top-20 range query on the index, against SQLite's indexed `ORDER BY … LIMIT 20`;
/// - (b) the same query without an index (a scan), against SQLite's unindexed one;
/// - (c) one write to the collection with one live query of 20 open, per write, against re-running the
///   query after each write (SQLite's, and our own indexed one);
/// - (d) building the index over the collection, against SQLite's `CREATE INDEX` on the same rows.
enum QueryBench {
    struct Options {
        var children: Int
        var seed: UInt64
    }

    static let suite = "query"
    /// Repetitions of the range queries, to time more than a clock tick.
    static let queryRuns = 2_000
    /// Writes timed with and without a live query open.
    static let writes = 5_000
    /// Children written by one merge op while filling the collection (about 3 MiB encoded).
    static let childrenPerMerge = 50_000

    static func run(_ options: Options, progress: BenchProgress) async throws -> [Measurement] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("weft-bench-query-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        progress.step("query: making \(options.children) children of 5 fields")
        let rows = makeRows(count: options.children, seed: options.seed)
        var measurements: [Measurement] = []

        // SQLite: the same rows in a plain table, then the index.
        let sqlite = try SQLiteQueryBaseline(path: directory.appendingPathComponent("baseline.sqlite").path)
        try sqlite.insert(rows)
        let low = Int64(options.children / 2)
        let sqliteScan = try sqlite.timeTopQuery(low: low, runs: max(1, queryRuns / 200))
        let sqliteBuild = try measureSeconds("query: SQLite CREATE INDEX", progress: progress) { try sqlite.createIndex() }
        let sqliteTop = try sqlite.timeTopQuery(low: low, runs: queryRuns)

        // Weft: the same children in a replica in memory.
        var replicaOptions = ReplicaOptions()
        replicaOptions.groupCommitDelayMilliseconds = 0
        let replica = try Replica.inMemory(options: replicaOptions)
        // In merges of a bounded number of children: one op carries at most WeftLimits' op size, which a
        // million children of 5 fields (about 64 MiB encoded) would pass.
        let collection = try Path("/posts")
        var start = 0
        while start < rows.count {
            let end = min(start + Self.childrenPerMerge, rows.count)
            let children = try rows[start..<end].map { row in
                MergeChild(relative: try Path(keys: [Key(unchecked: row.key)]), value: row.value)
            }
            try replica.submit(path: collection, kind: .merge(children), at: .now)
            start = end
        }
        try await replica.flush()
        guard let posts = replica.node(for: "/posts") else { throw BenchFailure("no /posts node") }
        let top = try posts.orderedByChild("score").starting(at: .int(low)).limit(toFirst: 20)
        let unindexedRuns = max(1, queryRuns / 200)
        progress.step("query: \(unindexedRuns) scans")
        let weftScan = try await timeFetches(top, runs: unindexedRuns)
        let weftBuild = try measureSeconds("query: Weft index build", progress: progress) {
            try replica.defineIndex(on: "/posts", orderedBy: "score")
        }
        try await replica.flush()
        progress.step("query: \(try top.explain())")
        guard try await top.fetch().count == 20 else { throw BenchFailure("the range query found no 20 rows") }
        let weftTop = try await timeFetches(top, runs: queryRuns)

        // (c) Writes: alone, with a live query of 20 open, and each followed by a re-run of the query. The
        // live query works on its own queue, so each figure is the CPU time of the whole process.
        var rng = SeededGenerator(seed: options.seed ^ 0xC0FFEE)
        let targets = (0..<writes).map { _ in try? Path("/posts/\(rows[Int(rng.below(UInt64(rows.count)))].key)/score") }
        let scores = (0..<writes).map { _ in Int64(rng.below(UInt64(options.children))) }
        func writeAll() throws {
            for index in 0..<writes {
                guard let path = targets[index] else { continue }
                try replica.submit(path: path, kind: .set(.int(scores[index])), at: .now)
            }
        }
        let alone = try await cpuSeconds(settling: replica) { try writeAll() }
        let events = Counter()
        let token = top.subscribe(queue: DispatchQueue(label: "bench.query.live")) { _ in events.add() }
        try await Task.sleep(nanoseconds: 100_000_000)
        let live = try await cpuSeconds(settling: replica) { try writeAll() }
        token.invalidate()
        progress.step("query: the live query delivered \(events.value) events for \(writes) writes")
        let rerun = try await cpuSeconds(settling: replica) {
            for index in 0..<writes {
                guard let path = targets[index] else { continue }
                try replica.submit(path: path, kind: .set(.int(scores[index])), at: .now)
                _ = try await top.fetch()
            }
        }
        let sqliteRerun = try sqlite.timeWritesWithQuery(writes: writes, low: low, children: options.children, seed: options.seed)
        let liveCost = max(live - alone, 0) / Double(writes)
        let rerunCost = max(rerun - alone, 0) / Double(writes)
        await replica.shutdown()

        measurements.append(Measurement(suite: suite, name: "(a) top-20 range, indexed", value: weftTop * 1e6, unit: "µs", baseline: sqliteTop * 1e6))
        measurements.append(Measurement(suite: suite, name: "(b) top-20 range, unindexed", value: weftScan * 1e3, unit: "ms", baseline: sqliteScan * 1e3))
        measurements.append(Measurement(suite: suite, name: "(c) live query of 20, per write", value: liveCost * 1e6, unit: "µs", baseline: sqliteRerun.perQuery * 1e6))
        measurements.append(Measurement(suite: suite, name: "(c) live query of 20 vs our re-run", value: liveCost * 1e6, unit: "µs", baseline: rerunCost * 1e6))
        measurements.append(Measurement(suite: suite, name: "(d) index build", value: weftBuild, unit: "s", baseline: sqliteBuild))
        return measurements
    }

    /// Seconds per fetch of `query`, over `runs` fetches.
    static func timeFetches(_ query: DataQuery, runs: Int) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<runs { _ = try await query.fetch() }
        let elapsed = clock.now - start
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(runs)
    }

    /// CPU seconds the process spends on `body` and on what it leaves to other threads (the commits and the
    /// live query's evaluations, waited for).
    static func cpuSeconds(settling replica: Replica, _ body: () async throws -> Void) async throws -> Double {
        let before = ProcessUsage.now
        try await body()
        try await replica.flush()
        try await Task.sleep(nanoseconds: 200_000_000)
        let used = ProcessUsage.now.since(before)
        return used.userSeconds + used.systemSeconds
    }

    /// One child: its key and its five fields.
    struct Row {
        var key: String
        var value: Value
        var score: Int64
    }

    static func makeRows(count: Int, seed: UInt64) -> [Row] {
        var rng = SeededGenerator(seed: seed)
        return (0..<count).map { number in
            let score = Int64(rng.below(UInt64(max(count, 1))))
            let value = Value.object([
                "title": .string("post \(number)"), "score": .int(score), "author": .string("u\(rng.below(1000))"),
                "open": .bool(rng.chance(0.5)), "likes": .int(Int64(rng.below(10_000))),
            ])
            return Row(key: "p\(number)", value: value, score: score)
        }
    }
}

/// The baseline: the same rows in a SQLite table of five columns, queried with `ORDER BY score LIMIT 20`.
struct SQLiteQueryBaseline {
    let queue: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.journalMode = .default
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.inDatabase { db in
            try db.execute(sql: "PRAGMA page_size = 16384")
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -65536")
            try db.execute(
                sql: """
                    CREATE TABLE post (key TEXT NOT NULL PRIMARY KEY, title TEXT, score INTEGER, author TEXT,
                        open INTEGER, likes INTEGER) WITHOUT ROWID
                    """)
        }
    }

    func insert(_ rows: [QueryBench.Row]) throws {
        try queue.inDatabase { db in
            let insert = try db.makeStatement(sql: "INSERT INTO post VALUES (?, ?, ?, ?, ?, ?)")
            try db.inTransaction(.immediate) {
                for row in rows {
                    let fields = row.value
                    func text(_ key: String) -> String { if case .string(let text) = fields[key] { text } else { "" } }
                    func integer(_ key: String) -> Int64 {
                        switch fields[key] {
                        case .int(let value): return value
                        case .bool(let flag): return flag ? 1 : 0
                        default: return 0
                        }
                    }
                    try insert.execute(arguments: [
                        row.key, text("title"), integer("score"), text("author"), integer("open"), integer("likes"),
                    ])
                }
                return .commit
            }
        }
    }

    func createIndex() throws {
        try queue.inDatabase { db in try db.execute(sql: "CREATE INDEX post_score ON post (score, key)") }
    }

    /// Seconds per run of the top-20 query from `low`, the rows read out as Weft reads its own.
    func timeTopQuery(low: Int64, runs: Int) throws -> Double {
        try queue.inDatabase { db in
            let select = try db.makeStatement(
                sql: "SELECT key, title, score, author, open, likes FROM post WHERE score >= ? ORDER BY score, key LIMIT 20")
            return try measureSeconds {
                for _ in 0..<runs {
                    let rows = try Row.fetchAll(select, arguments: [low])
                    precondition(rows.count == 20, "the baseline query finds 20 rows")
                }
            } / Double(runs)
        }
    }

    /// Seconds per query when each write is followed by the top-20 query (the write's cost taken out).
    func timeWritesWithQuery(writes: Int, low: Int64, children: Int, seed: UInt64) throws -> (perQuery: Double, perWrite: Double) {
        try queue.inDatabase { db in
            let update = try db.makeStatement(sql: "UPDATE post SET score = ? WHERE key = ?")
            let select = try db.makeStatement(
                sql: "SELECT key, title, score, author, open, likes FROM post WHERE score >= ? ORDER BY score, key LIMIT 20")
            var rng = SeededGenerator(seed: seed ^ 0xBEEF)
            func write() throws {
                try update.execute(arguments: [Int64(rng.below(UInt64(children))), "p\(rng.below(UInt64(children)))"])
            }
            let alone = try measureSeconds { for _ in 0..<writes { try write() } }
            let withQuery = try measureSeconds {
                for _ in 0..<writes {
                    try write()
                    _ = try Row.fetchAll(select, arguments: [low])
                }
            }
            return (max(withQuery - alone, 0) / Double(writes), alone / Double(writes))
        }
    }
}

/// A benchmark that could not run as planned.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Counts events from another thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }

    var value: Int { lock.withLock { count } }
}
