import ArgumentParser
import Foundation
import Logging
import Weft
import WeftCore
import WeftHTTP
import WeftNet
import WeftStore
import WeftSync

/// `weft serve`: opens a replica, listens for peers and clients, dials peers, until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Run a replica as a daemon: replicate with peers and serve clients until SIGINT or SIGTERM.")

    enum Role: String, ExpressibleByArgument, CaseIterable {
        case peer, hub
    }

    /// `--durability`: when a group commit is durable (see `Docs/STORAGE.md`).
    enum DurabilityChoice: String, ExpressibleByArgument, CaseIterable {
        case full, normal

        var durability: Durability { self == .full ? .full : .normal }
    }

    @Option(help: "The replica's SQLite file (created when missing).")
    var db: String

    @Option(
        help:
            "Where to listen for peers and clients, as HOST:PORT (a numeric address; port 0 picks one).")
    var listen: String

    @Option(help: "A peer to dial and keep dialling, as HOST:PORT; repeat for several.")
    var peer: [String] = []

    @Option(help: "The token file: one NAME SECRET per line (see Docs/CLI.md).")
    var tokens: String?

    @Option(
        help: ArgumentHelp(
            "The rules file: the kind (peer or client) of token entries and the paths each may read and write, "
                + "one KIND NAME [ACCESS PATTERN] per line (see Docs/CLI.md). SIGHUP reloads it with --tokens."))
    var rules: String?

    @Option(
        help: "The name this daemon introduces itself with; peers and clients file its token under it.")
    var name: String = "weft"

    @Option(help: "This replica's role: \(Role.allCases.map(\.rawValue).joined(separator: ", ")).")
    var role: Role = .peer

    @Option(
        help: ArgumentHelp(
            "When a write is durable: full (each group commit is synced to disk and survives a power loss) "
                + "or normal (it survives the process dying, not a power loss). A replica that syncs "
                + "needs full: ops it sent before a power loss could otherwise be issued again."))
    var durability: DurabilityChoice = .full

    @Flag(
        help: ArgumentHelp(
            "Open a database file copied from another replica's as a new replica (a new id, its data "
                + "kept); without it such a copy is refused, as two replicas must never share an id."))
    var reidentifyCopy = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(
        help: ArgumentHelp(
            "Compact the log once this many ops are stable (every member holds them); 0 never compacts. "
                + "A peer that joins after a compaction is sent a snapshot."))
    var compactAfter: Int = 50_000

    @Option(
        help: ArgumentHelp(
            "An index of a collection's children by a child path, as COLLECTION:FIELD "
                + "(e.g. /posts:meta/score); repeat for several. Built at start when missing, then kept "
                + "in step and stored in the file (see Docs/QUERIES.md)."))
    var index: [String] = []

    @Option(
        help: ArgumentHelp(
            "Also serve Firebase's REST API, event streams and /metrics over HTTP on HOST:PORT (port 0 picks "
                + "one; see Docs/HTTP.md). Off unless given."))
    var http: String?

    @Option(
        help: ArgumentHelp(
            "The webhooks file: one IDENTIFIER URL SECRET per line; subscriptions through them are delivered, "
                + "signed with the secret (push-gateway names the gateway of notifications; see Docs/HTTP.md)."))
    var webhooks: String?

    @Option(help: ArgumentHelp("Milliseconds before the first retry of a failed webhook delivery.", visibility: .hidden))
    var webhookRetryBase: Int64 = HTTPLimits.webhookRetryBaseMillis

    @Option(help: ArgumentHelp("Seconds between the keep-alive events of an HTTP event stream.", visibility: .hidden))
    var httpKeepAlive: Double = HTTPLimits.keepAliveSecondsDefault

    func validate() throws {
        _ = try HostPort.parse(listen, option: "--listen")
        if let http { _ = try HostPort.parse(http, option: "--http") }
        guard httpKeepAlive > 0 else { throw ValidationError("--http-keep-alive needs a positive number of seconds") }
        for address in peer {
            let (_, port) = try HostPort.parse(address, option: "--peer")
            guard port > 0 else {
                throw ValidationError("--peer needs a port in 1...65535, got \(address)")
            }
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown --log-level \(logLevel)")
        }
        guard rules == nil || tokens != nil else {
            throw ValidationError("--rules needs --tokens: its names are entries of the token file")
        }
        guard compactAfter >= 0 else {
            throw ValidationError("--compact-after needs 0 (never) or a number of ops, got \(compactAfter)")
        }
        for text in index { _ = try Self.parseIndex(text) }
    }

    /// `--index COLLECTION:FIELD`: the collection's path and the child path its children are ordered by.
    static func parseIndex(_ text: String) throws -> (collection: String, field: String) {
        guard let colon = text.firstIndex(of: ":") else {
            throw ValidationError("--index needs COLLECTION:FIELD (e.g. /posts:meta/score), got \(text)")
        }
        let collection = String(text[..<colon])
        let field = String(text[text.index(after: colon)...])
        guard !collection.isEmpty, !field.isEmpty else {
            throw ValidationError("--index needs a collection and a field (e.g. /posts:meta/score), got \(text)")
        }
        do {
            _ = try Query(path: try Path(collection)).orderedByChild(QueryField(field))
        } catch {
            throw ValidationError("--index \(text): \(error)")
        }
        return (collection, field)
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "weft.serve")
        // Caught before anything slow (loading a large replica takes seconds): a stop asked at any moment
        // from here on is a clean one, where the default action would end the process without a word.
        let stop = StopSignal()
        let reload = ReloadSignal()
        do {
            try StopSignals.route().watch(stop: stop, reload: reload, logger: logger)
            try await serve(stop: stop, reload: reload, logger: logger)
        } catch {
            logger.critical("weft serve stopped on an error", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
    }

    private func serve(stop: StopSignal, reload: ReloadSignal, logger: Logger) async throws {
        let book = try Self.loadTokens(tokens: tokens, rules: rules, logger: logger)
        try makeDirectory(of: db)
        var options = ReplicaOptions()
        options.durability = durability.durability
        options.copiedDatabase = reidentifyCopy ? .reidentify : .refuse
        logger.info("opening the replica", metadata: ["db": "\(db)"])
        let replica: Replica
        do {
            replica = try Replica.open(at: db, options: options)
        } catch let error as WeftError where error.code == .copiedDatabase {
            // The library's advice names the option; the daemon's names the flag.
            let what = error.message.components(separatedBy: "; open it with").first ?? error.message
            throw WeftError(
                .copiedDatabase,
                what + "; run weft serve with --reidentify-copy to open it as a new replica "
                    + "(a new id, its data kept)")
        }
        try await replica.waitUntilLoaded()
        logger.info(
            "replica open",
            metadata: ["db": "\(db)", "replica": "\(replica.replicaID)", "durability": "\(durability.rawValue)"])
        if stop.isFired {
            // Asked to stop while loading (the load cannot be interrupted): stop now, before listening.
            try await close(replica, logger: logger)
            return
        }
        try defineIndexes(on: replica, logger: logger)
        var configuration = SyncConfiguration(
            replica: replica.replicaID, role: role == .hub ? .hub : .peer, name: name, tokens: book)
        configuration.name = name
        let driver = try SyncDriver(replica: replica, configuration: configuration, logger: logger)
        let httpAccess = HTTPAccess(book)
        reload.setHandler { [tokens, rules] in
            await Self.reloadTokens(tokens: tokens, rules: rules, into: driver, http: httpAccess, logger: logger)
        }
        var httpServer: HTTPServer?
        do {
            let (host, port) = try HostPort.parse(listen, option: "--listen")
            // Each connection holds a descriptor: the usual soft limit (1024) is below the connections a
            // daemon accepts, and the hard one is what the administrator allows.
            if let raised = OpenFileLimit.raiseToHard() {
                logger.info("raised the open-file limit", metadata: ["from": "\(raised.from)", "to": "\(raised.to)"])
            }
            let bound = try await driver.listen(on: host, port: port)
            // One line on stdout so scripts and tests can learn the port chosen for port 0. A stdout that
            // cannot take it (closed, its reader gone) stops nothing: the log says where it listens too.
            _ = StandardStream.emit("listening \(describeAddress(host: host, port: bound))\n")
            if let http {
                let (httpHost, httpPort) = try HostPort.parse(http, option: "--http")
                let server = HTTPServer(
                    replica: replica, access: httpAccess, logger: logger, keepAlive: .seconds(httpKeepAlive),
                    peers: {
                        driver.status.peers.map {
                            HTTPPeerGauge(address: $0.address, opsBehind: $0.opsBehind, isConnected: $0.isConnected)
                        }
                    })
                httpServer = server
                let boundHTTP = try await server.start(host: httpHost, port: httpPort)
                // A second line, after the first that scripts already read: where HTTP listens.
                _ = StandardStream.emit("http listening \(describeAddress(host: httpHost, port: boundHTTP))\n")
            }
            for address in peer {
                let (peerHost, peerPort) = try HostPort.parse(address, option: "--peer")
                try await driver.addPeer(host: peerHost, port: peerPort)
            }
        } catch {
            await httpServer?.stop()
            await driver.shutdown()
            await replica.shutdown()
            throw error
        }
        let deliverer: WebhookDeliverer?
        do {
            deliverer = try startWebhooks(replica, access: httpAccess, logger: logger)
            if let deliverer { httpServer?.countDeliveries(of: deliverer) }
        } catch {
            await httpServer?.stop()
            await driver.shutdown()
            await replica.shutdown()
            throw error
        }
        let compacted = httpServer
        let compaction = Task {
            await compactWhileRunning(replica, logger: logger) { compacted?.noteCompaction() }
        }
        let storage = Task { await watchStorage(replica, stop: stop) }
        await stop.wait()
        for task in [compaction, storage] {
            task.cancel()
            await task.value
        }
        await deliverer?.stop()
        await httpServer?.stop()
        await driver.shutdown()
        try await close(replica, logger: logger)
    }

    /// Defines every `--index`: one stored in the file is ready at once, a new one is built from the
    /// children already there, with its progress on stderr.
    private func defineIndexes(on replica: Replica, logger: Logger) throws {
        for text in index {
            let (collection, field) = try Self.parseIndex(text)
            if replica.indexes[collection]?.contains(field) == true { continue }
            logger.info("building an index", metadata: ["collection": "\(collection)", "field": "\(field)"])
            var reported = 0
            try replica.defineIndex(on: collection, orderedBy: field) { done, total in
                // A line per tenth at most: a million children make ten lines, not a million.
                guard total > 0, done == total || done * 10 / total > reported else { return }
                reported = done * 10 / total
                let line = "index \(collection):\(field): \(done) of \(total) children\n"
                _ = StandardStream.emit(line, to: STDERR_FILENO)
            }
            logger.info("index ready", metadata: ["collection": "\(collection)", "field": "\(field)"])
        }
    }

    /// Flushes what group commit still holds and closes the database: the end of a clean stop.
    private func close(_ replica: Replica, logger: Logger) async throws {
        var failure: WeftError?
        do {
            try await replica.flush()
        } catch {
            let error = error as? WeftError ?? WeftError(.storage, "\(error)")
            let next = error.code == .diskFull ? "make room on the disk" : "fix that"
            failure = WeftError(error.code, error.message + "; \(next), then start weft serve again")
        }
        await replica.shutdown()
        if let failure { throw failure }
        logger.info("weft serve stopped cleanly")
    }
}

extension ServeCommand {
    /// The token book from `--tokens`, with the kinds and rules of `--rules`.
    private static func loadTokens(tokens: String?, rules: String?, logger: Logger) throws -> TokenBook {
        guard let tokens else {
            logger.warning("no --tokens file: every peer and client will be refused")
            return TokenBook()
        }
        var book = try TokenFile.load(path: tokens)
        if book.isEmpty {
            logger.warning("the token file \(tokens) has no entry: every peer and client will be refused")
        }
        if let rules {
            book.rules = try RulesFile.load(path: rules, names: Set(book.names))
            let restricted = book.rules.entries.values.filter { !$0.rules.isEmpty }.count
            logger.info(
                "rules loaded",
                metadata: [
                    "rules": "\(rules)", "names": "\(book.rules.entries.count)", "restricted": "\(restricted)",
                    "unmentioned": "\(book.names.count - book.rules.entries.count)",
                ])
        }
        return book
    }

    /// On SIGHUP: reads both files again and hands the new book to the driver; a file that no longer parses
    /// changes nothing (the daemon goes on with the book it has, and says why).
    private static func reloadTokens(
        tokens: String?, rules: String?, into driver: SyncDriver, http: HTTPAccess, logger: Logger
    ) async {
        let book: TokenBook
        do {
            book = try loadTokens(tokens: tokens, rules: rules, logger: logger)
        } catch {
            logger.error(
                "reload refused: the token and rules in force are kept", metadata: ["error": "\(error)"])
            return
        }
        http.update(book)
        do {
            try await driver.updateTokens(book)
        } catch {
            logger.warning("reload not applied", metadata: ["error": "\(error)"])
        }
    }
}

extension ServeCommand {
    /// Every second, compacts the log once `--compact-after` ops are stable, until cancelled.
    private func compactWhileRunning(
        _ replica: Replica, logger: Logger, compacted: @Sendable () -> Void = {}
    ) async {
        guard compactAfter > 0 else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            guard !Task.isCancelled, replica.compactableOpCount() >= compactAfter else { continue }
            do {
                let report = try await replica.compact(vacuum: false)
                compacted()
                logger.info(
                    "compacted the log",
                    metadata: [
                        "folded": "\(report.opsFolded)", "frontier": "\(report.frontier?.text ?? "-")",
                        "bytesBefore": "\(report.bytesBefore)", "bytesAfter": "\(report.bytesAfter)",
                    ])
            } catch {
                logger.error("compaction failed; the log keeps its ops", metadata: ["error": "\(error)"])
            }
        }
    }
}

extension ServeCommand {
    /// Creates the directory of the database file when missing, or says plainly why it cannot.
    private func makeDirectory(of database: String) throws {
        let directory = (database as NSString).deletingLastPathComponent
        guard !directory.isEmpty else { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            // Foundation's description is its whole error object; the system's reason is underneath.
            let underlying = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
            let number = underlying.flatMap { $0.domain == NSPOSIXErrorDomain ? Int32($0.code) : nil }
            let reason = number.map { String(cString: strerror($0)) } ?? error.localizedDescription
            let readOnly = number.map { [EROFS, EACCES, EPERM].contains($0) } ?? false
            throw WeftError(
                readOnly ? .readOnly : .storage,
                "cannot create the directory \(directory) of --db: \(reason); give a --db path it can create")
        }
    }

    /// Every second, asks the replica whether a commit failed (a full disk): it then refuses every write
    /// until reopened, so the daemon stops (with its error) rather than run on unable to write.
    private func watchStorage(_ replica: Replica, stop: StopSignal) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            guard !Task.isCancelled else { return }
            do {
                try await replica.flush()
            } catch {
                stop.fire()
                return
            }
        }
    }
}

/// `host:port`, bracketing IPv6 addresses.
private func describeAddress(host: String, port: Int) -> String {
    host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
}

/// Fired by the first SIGINT or SIGTERM (see `StopSignals`) or a failed commit; awaited by the command.
final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func fire() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            fired = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// True once fired.
    var isFired: Bool { lock.withLock { fired } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = lock.withLock { () -> Bool in
                if fired { return true }
                waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
