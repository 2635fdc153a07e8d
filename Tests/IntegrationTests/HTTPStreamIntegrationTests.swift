import Foundation
import Testing

/// Event streams of `weft serve --http`, read over a raw socket as `curl -N` would.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HTTPStreamIntegrationTests {
    /// One `text/event-stream` response read as it arrives.
    final class EventStream {
        let socket: Int32
        private var text = ""

        init(port: Int, path: String, token: String) throws {
            guard let socket = RawSocket.connect(port: port) else {
                throw WeftBinary.Failure(description: "cannot connect to \(port)")
            }
            self.socket = socket
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let request =
                "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n"
            let bytes = Array(request.utf8)
            guard send(socket, bytes, bytes.count, 0) == bytes.count else {
                close(socket)
                throw WeftBinary.Failure(description: "cannot send the request")
            }
        }

        /// The next event (name and data), waiting at most `seconds`; chunk framing lies between events.
        func next(seconds: Double = 20) throws -> (event: String, data: String) {
            let deadline = Date().addingTimeInterval(seconds)
            while true {
                if let start = text.range(of: "event: "), let end = text.range(of: "\n\n", range: start.upperBound..<text.endIndex) {
                    let block = text[start.upperBound..<end.lowerBound]
                    text = String(text[end.upperBound...])
                    let lines = block.split(separator: "\n", maxSplits: 1)
                    let data = lines.count > 1 ? String(lines[1].dropFirst("data: ".count)) : ""
                    return (String(lines[0]), data)
                }
                guard Date() < deadline else {
                    throw WeftBinary.Failure(description: "no event within \(seconds) s; read so far: \(text)")
                }
                var buffer = [UInt8](repeating: 0, count: 65_536)
                let count = recv(socket, &buffer, buffer.count, 0)
                if count > 0 { text += String(decoding: buffer[0..<count], as: UTF8.self) }
                if count == 0 { throw WeftBinary.Failure(description: "the stream closed; read so far: \(text)") }
            }
        }

        /// Events until one named `name` (at most `seconds`), skipping keep-alives and others.
        func next(named name: String, seconds: Double = 20) throws -> String {
            let deadline = Date().addingTimeInterval(seconds)
            while true {
                let event = try next(seconds: max(0.1, deadline.timeIntervalSinceNow))
                if event.event == name { return event.data }
            }
        }

        deinit { close(socket) }
    }

    @Test func aStreamStartsWithThePutOfTheNodeAndSeesARemotePeersWrite() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let mesh = DaemonIntegrationTests.meshToken
        let hub = try await HTTPRESTIntegrationTests.Server(
            scratch, extraTokens: ["hub \(mesh)", "edge \(mesh)"], options: ["--http-keep-alive", "0.5"])
        defer { hub.daemon.stop() }
        #expect(try await hub.send("PUT", "/rooms/a.json", body: #"{"title":"A"}"#).status == 200)
        let edge = try await Daemon(
            database: scratch.file("edge.sqlite"), peers: [hub.daemon.port], tokens: scratch.file("tokens-hub"),
            name: "edge")
        defer { edge.stop() }

        let stream = try EventStream(
            port: hub.httpPort, path: "/rooms.json", token: HTTPRESTIntegrationTests.adminToken)
        let first = try stream.next()
        #expect(first.event == "put")
        #expect(first.data == #"{"path":"/","data":{"a":{"title":"A"}}}"#)

        // A write on the edge replicates to the hub, whose stream tells it as a patch of /rooms.
        let set = try await DaemonIntegrationTests.client(edge, name: "edge", ["set", "/rooms/b", #"{"title":"B"}"#])
        #expect(set.status == 0, "\(set.stderr)")
        let patch = try stream.next(named: "patch")
        #expect(patch == #"{"path":"/","data":{"b":{"title":"B"}}}"#)
        // Keep-alives come at the interval asked for.
        #expect(try stream.next(named: "keep-alive", seconds: 5) == "null")
        // A write over HTTP of a scalar node is a put.
        #expect(try await hub.send("DELETE", "/rooms.json").status == 200)
        #expect(try stream.next(named: "put") == #"{"path":"/","data":null}"#)
    }

    @Test func aReloadCancelsAStreamItsRulesNoLongerAllowAndRevokesARemovedToken() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let hub = try await HTTPRESTIntegrationTests.Server(scratch)
        defer { hub.daemon.stop() }
        let alice = HTTPRESTIntegrationTests.aliceToken
        let publicStream = try EventStream(port: hub.httpPort, path: "/public.json", token: alice)
        #expect(try publicStream.next().event == "put")
        let ownStream = try EventStream(port: hub.httpPort, path: "/users/alice.json", token: alice)
        #expect(try ownStream.next().event == "put")

        // alice loses /public: that stream is cancelled, her own goes on.
        _ = try scratch.write("rules-hub", "client alice readwrite /users/$name/**\n")
        kill(hub.daemon.process.processIdentifier, SIGHUP)
        let reason = try publicStream.next(named: "cancel")
        #expect(reason.contains("no read access to /public for alice"))
        #expect(try await hub.send("PUT", "/users/alice/x.json", body: "1").status == 200)
        // Her node was null, not an object: the change is a put of the whole node, as Docs/HTTP.md says.
        #expect(try ownStream.next(named: "put") == #"{"path":"/","data":{"x":1}}"#)

        // alice's token is removed: her stream ends with auth_revoked, and her requests get 401.
        _ = try scratch.write("tokens-hub", "client \(HTTPRESTIntegrationTests.adminToken)\n")
        _ = try scratch.write("rules-hub", "client client\n")
        kill(hub.daemon.process.processIdentifier, SIGHUP)
        _ = try ownStream.next(named: "auth_revoked")
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await hub.send("GET", "/users/alice.json", token: alice).status == 401)
    }
}
