import ArgumentParser
import Foundation
import Weft
import WeftCore
import WeftSync

struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the children of a path a query selects, in order, as a JSON array of {key, value}.",
        discussion: """
            Values of --start-at, --end-at and --equal-to are JSON (a string is quoted: '"b"'); the
            matching --…-key option gives the key that breaks ties among children with that value.
            --where takes an expression such as 'status == "open" && (meta/score >= 10 || pinned exists)'
            (operators == != < <= > >= in [..] exists && || ! and parentheses; repeated, the expressions
            are joined with &&). With --watch, one JSON line per change: the result and what changed.
            A query that is not valid exits 2 before connecting.
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "The path whose children are queried, e.g. /posts.") var path: String

    @Option(help: "Order the children by the value at this child path, e.g. meta/score.")
    var orderByChild: String?
    @Flag(help: "Order the children by key (the default).") var orderByKey = false
    @Flag(help: "Order the children by their own value.") var orderByValue = false

    @Option(parsing: .unconditional, help: "Only children ordered at or after this JSON value.")
    var startAt: String?
    @Option(help: "With --start-at: among children equal to it, only keys from this one on.")
    var startAtKey: String?
    @Option(parsing: .unconditional, help: "Only children ordered at or before this JSON value.")
    var endAt: String?
    @Option(help: "With --end-at: among children equal to it, only keys up to this one.")
    var endAtKey: String?
    @Option(parsing: .unconditional, help: "Only children ordered at this JSON value.")
    var equalTo: String?
    @Option(help: "With --equal-to: only the child with this key.")
    var equalToKey: String?

    @Option(parsing: .unconditional, help: "Keep the first N children.") var limitToFirst: String?
    @Option(parsing: .unconditional, help: "Keep the last N children.") var limitToLast: String?
    @Option(parsing: .unconditional, help: "Skip N children at the limited end.") var offset: String?
    @Option(name: .customLong("where"), help: "A predicate on child paths (repeatable; joined with &&).")
    var predicates: [String] = []

    @Flag(help: "Print the result, then the result and its changes after every change, until interrupted.")
    var watch = false

    func run() async throws {
        await runClient(options, input: { try query() }) { client, query in
            guard watch else { return try ClientInput.printJSON(text: QueryOutput.rows(try await client.query(query))) }
            try await watchQuery(query, client: client)
        }
    }

    private func watchQuery(_ query: Query, client: SyncClient) async throws {
        let end = WatchEnd()
        let lines = QueryOutput.Lines(end: end)
        let (_, first) = try await client.watch(query) { result, changes in
            lines.emit(QueryOutput.line(result, changes: changes))
        }
        lines.open(with: QueryOutput.line(first, changes: nil))
        Task { end.finish(.connectionClosed(await client.waitUntilClosed())) }
        switch await end.wait() {
        case .outputClosed, .connectionClosed(nil): return
        case .outputFailed(let error): throw StandardStream.failure(error)
        case .connectionClosed(let error?): throw ClientFailure(error)
        }
    }

    /// The query the options describe, or a usage failure naming what is wrong.
    func query() throws -> Query {
        let path = try ClientInput.path(path)
        do {
            var query = Query(path: path)
            let orderings = [orderByChild != nil, orderByKey, orderByValue].filter { $0 }.count
            guard orderings <= 1 else {
                throw ClientFailure(
                    code: .usage, "invalid query: give one of --order-by-child, --order-by-key, --order-by-value")
            }
            if let orderByChild { query = try query.orderedByChild(QueryField(orderByChild)) }
            if orderByKey { query = try query.orderedByKey() }
            if orderByValue { query = try query.orderedByValue() }
            for (option, key, keyOption) in [
                ("--start-at", startAtKey, "--start-at-key"), ("--end-at", endAtKey, "--end-at-key"),
                ("--equal-to", equalToKey, "--equal-to-key"),
            ] where key != nil && bound(option) == nil {
                throw ClientFailure(code: .usage, "invalid query: \(keyOption) needs \(option)")
            }
            if let equalTo {
                guard startAt == nil, endAt == nil else {
                    throw ClientFailure(code: .usage, "invalid query: --equal-to excludes --start-at and --end-at")
                }
                query = try query.equal(to: try value(equalTo, option: "--equal-to"), key: equalToKey)
            }
            if let startAt { query = try query.starting(at: try value(startAt, option: "--start-at"), key: startAtKey) }
            if let endAt { query = try query.ending(at: try value(endAt, option: "--end-at"), key: endAtKey) }
            for text in predicates {
                do {
                    query = try query.where(try QueryPredicate(parsing: text))
                } catch let error as QueryExpressionError {
                    throw ClientFailure(code: .usage, "invalid query: --where \(ClientInput.shown(text)): \(error)")
                }
            }
            guard limitToFirst == nil || limitToLast == nil else {
                throw ClientFailure(code: .usage, "invalid query: give --limit-to-first or --limit-to-last, not both")
            }
            if let limitToFirst { query = try query.limit(toFirst: try count(limitToFirst, option: "--limit-to-first")) }
            if let limitToLast { query = try query.limit(toLast: try count(limitToLast, option: "--limit-to-last")) }
            if let offset { query = try query.offset(try count(offset, option: "--offset")) }
            return query
        } catch let error as QueryError {
            throw ClientFailure(code: .usage, "invalid query: \(error)")
        }
    }

    private func bound(_ option: String) -> String? {
        switch option {
        case "--start-at": return startAt
        case "--end-at": return endAt
        default: return equalTo
        }
    }

    private func value(_ text: String, option: String) throws -> Value {
        do {
            return try Value(json: text)
        } catch {
            throw ClientFailure(
                code: .usage, "invalid query: \(option) takes a JSON value; \(ClientInput.shown(text)) is not one: \(error)")
        }
    }

    private func count(_ text: String, option: String) throws -> Int {
        guard let count = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw ClientFailure(code: .usage, "invalid query: \(option) takes a whole number, got \(ClientInput.shown(text))")
        }
        return count
    }
}

/// The JSON text `weft query` prints (a result is an array, which `Value` does not hold: keys keep the order).
enum QueryOutput {
    /// `[{"key":"p1","value":…},…]` in the result's order.
    static func rows(_ result: QueryResult) -> String {
        "[" + result.map { #"{"key":"# + Value.string($0.key.text).jsonString() + #","value":"# + $0.value.jsonString() + "}" }
            .joined(separator: ",") + "]"
    }

    /// One line of `--watch`: `{"result":[…]}` first, then `{"result":[…],"changes":{…}}` with the
    /// change set (indexes into the previous result for deletions and modifications, into the new one for
    /// insertions, and moves from old to new).
    static func line(_ result: QueryResult, changes: QueryChangeSet?) -> String {
        guard let changes else { return #"{"result":"# + rows(result) + "}" }
        let list = { (indexes: IndexSet) in "[" + indexes.map(String.init).joined(separator: ",") + "]" }
        let moves = changes.moves.map { #"{"from":\#($0.from),"to":\#($0.to)}"# }.joined(separator: ",")
        return #"{"result":"# + rows(result) + #","changes":{"deletions":"# + list(changes.deletions)
            + #","insertions":"# + list(changes.insertions) + #","modifications":"# + list(changes.modifications)
            + #","moves":["# + moves + "]}}"
    }

    /// The lines of a live query in order: changes that arrive before the first result is printed wait for it.
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private let end: WatchEnd
        private var waiting: [String]? = []

        init(end: WatchEnd) { self.end = end }

        func emit(_ line: String) {
            let now = lock.withLock { () -> Bool in
                guard waiting != nil else { return true }
                waiting?.append(line)
                return false
            }
            if now { write(line) }
        }

        func open(with first: String) {
            lock.withLock {
                write(first)
                for line in waiting ?? [] { write(line) }
                waiting = nil
            }
        }

        private func write(_ line: String) {
            // A reader that went away (`weft query --watch … | head -1`) ends the watch, as it ends `yes`.
            guard !end.hasEnded, let error = StandardStream.emit(line + "\n") else { return }
            end.finish(error == EPIPE ? .outputClosed : .outputFailed(error))
        }
    }
}

extension ClientInput {
    /// Prints JSON text already made on one line; see ``printJSON(_:)``.
    static func printJSON(text: String) throws {
        guard let error = StandardStream.emit(text + "\n"), error != EPIPE else { return }
        throw StandardStream.failure(error)
    }
}
