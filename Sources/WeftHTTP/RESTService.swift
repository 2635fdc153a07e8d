import Crypto
import Foundation
import HTTPTypes
import Hummingbird
@_spi(Engine) import Weft
import WeftCore
import WeftSync

/// Answers Firebase Realtime Database REST requests (`/<path>.json`) from a replica.
///
/// Each request is authenticated with a client entry of the token book, checked against that entry's
/// path rules like a binary session's request, and answered once its write is durable.
final class RESTService: Sendable {
    let replica: Replica
    let access: HTTPAccess
    let streams: StreamRegistry
    let metrics: HTTPMetrics
    let clock: @Sendable () -> Int64

    init(replica: Replica, access: HTTPAccess, streams: StreamRegistry, metrics: HTTPMetrics,
         clock: @escaping @Sendable () -> Int64) {
        self.replica = replica
        self.access = access
        self.streams = streams
        self.metrics = metrics
        self.clock = clock
    }

    static let methodOverride = HTTPField.Name("X-HTTP-Method-Override")!
    static let firebaseETag = HTTPField.Name("X-Firebase-ETag")!

    /// The answer to one request; never throws (every failure is a Firebase-shaped error response).
    func respond(to request: Request) async -> Response {
        metrics.requests.increment()
        do {
            return try await route(request)
        } catch let failure as HTTPFailure {
            return Self.failure(failure)
        } catch {
            return Self.failure(HTTPFailure(status: 500, "Internal error: \(error)"))
        }
    }

    private func route(_ request: Request) async throws -> Response {
        var method = request.method
        if method == .post, let override = request.headers[Self.methodOverride] {
            guard let overridden = HTTPRequest.Method(override.uppercased()) else {
                throw HTTPFailure(status: 405, "Unknown X-HTTP-Method-Override \(override)")
            }
            method = overridden
        }
        let rawPath = request.uri.path
        if rawPath == "/metrics" {
            guard method == .get else { throw HTTPFailure(status: 405, "/metrics answers GET only") }
            return metrics.response()
        }
        if rawPath == Self.subscriptionsRoute {
            let client = try authenticate(request, Parameters(query: request.uri.query))
            return try await subscriptions(request, method: method, client: client)
        }
        guard [.get, .put, .post, .patch, .delete].contains(method) else {
            throw HTTPFailure(status: 405, "Method not allowed: \(method.rawValue); use GET, PUT, POST, PATCH or DELETE")
        }
        guard rawPath.hasSuffix(".json") else {
            throw HTTPFailure(status: 404, "Not found: routes are /<path>.json and /metrics")
        }
        let parameters = Parameters(query: request.uri.query)
        let client = try authenticate(request, parameters)
        let path = try Self.path(of: rawPath)
        let silent = try parameters.printMode() == "silent"
        let pretty = try parameters.printMode() == "pretty"
        let wantsETag = request.headers[Self.firebaseETag]?.lowercased() == "true"
        let ifMatch = request.headers[.ifMatch].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
        if ifMatch != nil, method != .put, method != .delete {
            throw HTTPFailure.badRequest("if-match is only supported on PUT and DELETE")
        }

        switch method {
        case .get:
            try client.check(.read, at: path)
            if request.headers[.accept]?.contains("text/event-stream") == true {
                return try streams.open(path: path, client: client, secret: try secret(request, parameters))
            }
            let value = try read(path, parameters)
            return Self.json(value, pretty: pretty, silent: silent, etag: wantsETag ? Self.etag(of: value) : nil)
        case .put:
            try client.check(.write, at: path)
            let body = try ServerValues.parse(try await Self.body(of: request), nowMillis: clock())
            if let ifMatch {
                let written = try await compareAndSet(path, body, ifMatch: ifMatch)
                return Self.json(written, pretty: pretty, silent: silent, etag: Self.etag(of: written))
            }
            try await write(path, body)
            return Self.json(replica.value(at: path), pretty: pretty, silent: silent, etag: nil)
        case .post:
            try client.check(.write, at: path)
            var body = try ServerValues.parse(try await Self.body(of: request), nowMillis: clock())
            // A new child holds nothing yet: each increment of it starts from 0.
            for (keys, step) in body.increments {
                if keys.isEmpty { body.value = step.value } else { body.value.write(step.value, at: keys[...]) }
            }
            guard !body.value.isNull else { throw HTTPFailure.badRequest("Invalid data; a POST body is not null") }
            let (key, receipt) = try submitting { try replica.submitPush(parent: path, value: body.value) }
            try await durable(receipt)
            return Self.rawJSON(#"{"name":\#(Value.string(key).jsonString())}"#, pretty: pretty, silent: silent)
        case .patch:
            let text = try await patch(path, request, client: client)
            return Self.rawJSON(text, pretty: pretty, silent: silent)
        default:  // .delete
            try client.check(.write, at: path)
            if let ifMatch {
                let written = try await compareAndSet(
                    path, ServerValueBody(value: .null, increments: []), ifMatch: ifMatch)
                return Self.json(written, pretty: pretty, silent: silent, etag: Self.etag(of: written))
            }
            let receipt = try submitting { try replica.submit(path: path, kind: .set(.null)) }
            try await durable(receipt)
            return Self.json(.null, pretty: pretty, silent: silent, etag: nil)
        }
    }

    // MARK: - Reads

    private func read(_ path: Path, _ parameters: Parameters) throws(HTTPFailure) -> Value {
        let query = try parameters.query(at: path)
        let shallow = parameters["shallow"] == "true"
        if shallow, query != nil {
            throw HTTPFailure.badRequest("Mixing 'shallow' and querying parameters is not supported")
        }
        if let query { return answer(query) }
        let value = replica.value(at: path)
        guard shallow, case .object(let children) = value else { return value }
        return .object(children.mapValues { $0.isObject ? .bool(true) : $0 })
    }

    /// Answers a query as the binary protocol does: through the replica's index of the collection when
    /// one serves it (`weft serve --index`), else by scanning the node's children.
    func answer(_ query: Query) -> Value {
        replica.answer(query).value
    }

    // MARK: - Writes

    private func write(_ path: Path, _ body: ServerValueBody) async throws {
        let kind: OpKind
        if body.increments.count == 1, body.increments[0].keys.isEmpty {
            kind = .increment(by: body.increments[0].step, from: .int(0))
        } else if body.increments.isEmpty {
            kind = .set(body.value)
        } else {
            // The increments of a replaced subtree count from the numbers there before it: they are
            // written in the same op as the set, so they apply together.
            let current = replica.value(at: path)
            var writes: [Write] = [.set(path, body.value)]
            for (keys, step) in body.increments {
                let start = Number(current.value(at: keys[...])) ?? .int(0)
                writes.append(.increment(try Self.join(path, keys), by: step, from: start))
            }
            kind = .batch(writes)
        }
        let receipt = try submitting { try replica.submit(path: path, kind: kind) }
        try await durable(receipt)
    }

    private func patch(_ path: Path, _ request: Request, client: HTTPClient) async throws -> String {
        let (members, markers) = try ServerValues.members(try await Self.body(of: request), nowMillis: clock())
        guard !members.isEmpty else { throw HTTPFailure.badRequest("Invalid data; a PATCH body names at least one path") }
        var children: [MergeChild] = []
        var increments: [Write] = []
        var written: [(String, Path)] = []
        for (name, value) in members {
            let relative: Path
            do {
                relative = try Path(name)
            } catch {
                throw HTTPFailure.badRequest("Invalid path in a PATCH body: \(name): \(error)")
            }
            guard !relative.isRoot else { throw HTTPFailure.badRequest("Invalid path in a PATCH body: \(name)") }
            let target = try Self.join(path, relative.keys)
            try client.check(.write, at: target)
            written.append((name, target))
            let body = ServerValues.extract(value, markers: markers)
            let current = body.increments.isEmpty ? Value.null : replica.value(at: target)
            for (keys, step) in body.increments {
                let wholeChild = keys.isEmpty
                let start = wholeChild ? Number.int(0) : Number(current.value(at: keys[...])) ?? Number.int(0)
                increments.append(.increment(try Self.join(target, keys), by: step, from: start))
            }
            if !(body.value.isNull && body.increments.contains { $0.keys.isEmpty }) {
                children.append(MergeChild(relative: relative, value: body.value))
            }
        }
        let kind: OpKind
        do {
            let validated = children.isEmpty ? [] : try MergeChild.validated(children)
            if increments.isEmpty {
                kind = .merge(validated)
            } else {
                kind = .batch((validated.isEmpty ? [] : [Write.merge(path, validated)]) + increments)
            }
        } catch {
            throw HTTPFailure.badRequest("Invalid data; \(error)")
        }
        let receipt = try submitting { try replica.submit(path: path, kind: kind) }
        try await durable(receipt)
        let parts = written.map { name, target in
            Value.string(name).jsonString() + ":" + replica.value(at: target).jsonString()
        }
        return "{" + parts.joined(separator: ",") + "}"
    }

    /// Writes `body` only while the node's ETag is `ifMatch`: a transaction, so of two clients racing
    /// with the same ETag exactly one wins (the other's op is rejected as a stale read, and its retry
    /// sees the new ETag).
    private func compareAndSet(_ path: Path, _ body: ServerValueBody, ifMatch: String) async throws -> Value {
        guard body.increments.isEmpty else {
            throw HTTPFailure.badRequest("an increment server value cannot be combined with if-match")
        }
        guard let node = replica.node(for: path.description) else {
            throw HTTPFailure.badRequest("Invalid path: \(path)")
        }
        let result = try await node.runTransaction { current in
            Self.etag(of: current) == ifMatch ? .set(body.value) : .abort
        }
        guard result.isCommitted else {
            var failure = HTTPFailure(status: 412, "ETag mismatch")
            failure.current = (result.value, Self.etag(of: result.value))
            throw failure
        }
        return result.value
    }

    private func submitting<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as WeftError {
            metrics.writesRejected.increment()
            throw Self.failure(for: error)
        }
    }

    /// Waits until the write is durable; a rejected write (an increment of a string) is a 400.
    private func durable(_ receipt: WriteReceipt) async throws {
        let status: WriteStatus
        do {
            status = try await receipt.wait(for: .durable)
        } catch let error as WeftError {
            metrics.writesRejected.increment()
            throw Self.failure(for: error)
        }
        if case .rejected(let rejection) = status {
            metrics.writesRejected.increment()
            throw HTTPFailure.badRequest("Write rejected: \(rejection)")
        }
        metrics.writesApplied.increment()
    }

    private static func failure(for error: WeftError) -> HTTPFailure {
        switch error.code {
        case .invalidPath, .invalidKey, .invalidValue, .invalidJSON:
            return HTTPFailure.badRequest("Invalid data; \(error)")
        case .valueTooLarge:
            return HTTPFailure(status: 413, "Too large: \(error)")
        default:
            return HTTPFailure(status: 500, "\(error)")
        }
    }

    // MARK: - Requests

    private func secret(_ request: Request, _ parameters: Parameters) throws(HTTPFailure) -> [UInt8] {
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return Array(parts[1].utf8) }
            throw HTTPFailure(status: 401, "Unauthorized request: the Authorization header is Bearer SECRET")
        }
        if let auth = parameters["auth"] { return Array(auth.utf8) }
        throw HTTPFailure(
            status: 401, "Unauthorized request: give a client token as Authorization: Bearer SECRET or ?auth=SECRET")
    }

    func authenticate(_ request: Request, _ parameters: Parameters) throws(HTTPFailure) -> HTTPClient {
        let secret = try secret(request, parameters)
        guard let client = access.client(presenting: secret) else {
            metrics.unauthorized.increment()
            throw HTTPFailure(status: 401, "Unauthorized request: no client entry of the token file holds this secret")
        }
        return client
    }

    /// The node of `/<path>.json`, percent-decoded.
    static func path(of raw: String) throws(HTTPFailure) -> Path {
        let stem = String(raw.dropLast(".json".count))
        guard let decoded = stem.removingPercentEncoding else {
            throw HTTPFailure.badRequest("Invalid path: \(raw) is not percent-encoded correctly")
        }
        if decoded.isEmpty || decoded == "/" { return .root }
        do {
            return try Path(decoded)
        } catch {
            throw HTTPFailure.badRequest("Invalid path: \(decoded): \(error)")
        }
    }

    static func join(_ path: Path, _ keys: [Key]) throws(HTTPFailure) -> Path {
        do {
            return try path.appending(try Path(keys: keys))
        } catch {
            throw HTTPFailure.badRequest("Invalid path below \(path): \(error)")
        }
    }

    static func body(of request: Request) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= HTTPLimits.requestBodyBytesMax else {
                throw HTTPFailure(
                    status: 413, "Payload too large: a request body holds at most \(HTTPLimits.requestBodyBytesMax) bytes")
            }
            bytes += buffer.readableBytesView
        }
        return bytes
    }

    // MARK: - Responses

    /// Firebase's ETag of a value: a hash of its canonical JSON.
    static func etag(of value: Value) -> String {
        Data(SHA256.hash(data: Array(value.jsonString().utf8))).base64EncodedString()
    }

    static func json(_ value: Value, pretty: Bool, silent: Bool, etag: String?) -> Response {
        var response = rawJSON(pretty ? PrettyJSON.text(value) : value.jsonString(), pretty: false, silent: silent)
        if let etag { response.headers[.eTag] = etag }
        return response
    }

    static func rawJSON(_ text: String, pretty: Bool, silent: Bool) -> Response {
        if silent { return Response(status: .noContent) }
        let shown = pretty ? ((try? Value.jsonMembers(text)).map(PrettyJSON.members) ?? text) : text
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: shown)))
    }

    static func failure(_ failure: HTTPFailure) -> Response {
        if let (value, etag) = failure.current {
            var response = Response(
                status: .init(code: failure.status), headers: [.contentType: "application/json; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: value.jsonString())))
            response.headers[.eTag] = etag
            return response
        }
        let text = #"{"error":\#(Value.string(failure.message).jsonString())}"#
        return Response(
            status: .init(code: failure.status), headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
