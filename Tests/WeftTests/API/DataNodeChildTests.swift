import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// `child(_:)` and `replica.node(at:)` throw where `relativeNode(for:)`, `/` and `node(for:)` return nil,
/// so an app needs no unwrapping helper of its own (ChatLog had one).
@Suite struct DataNodeChildTests {
    @Test func childFollowsTheSeedPathGrammar() throws {
        let replica = try Replica.inMemory()
        let bar = try replica.node(at: "/foo/bar")
        #expect(try bar.child("geek").path == "/foo/bar/geek")
        #expect(try bar.child("/../geek//noob/.").path == "/foo/geek/noob")
        #expect(try bar.child("../geek/../..//../..").path == "/")
        #expect(try bar.child("a/b") == bar.relativeNode(for: "a/b"))
        #expect(try bar.forCombine.child("a").dataNode == bar / "a")
    }

    @Test func anInvalidKeyThrowsInvalidKeyNamingTheKey() throws {
        let replica = try Replica.inMemory()
        let error = #expect(throws: WeftError.self) { try replica.root.child("users/a.b") }
        #expect(error?.code == .invalidKey)
        #expect(error?.path == "a.b")
        #expect(replica.root.relativeNode(for: "users/a.b") == nil)
        #expect((#expect(throws: WeftError.self) { try replica.node(at: "/x/$y") })?.code == .invalidKey)
    }

    @Test func aPathDeeperThanTheLimitThrowsInvalidPath() throws {
        let replica = try Replica.inMemory()
        let deep = (0...CoreLimits.pathDepthMax).map { "k\($0)" }.joined(separator: "/")
        let error = #expect(throws: WeftError.self) { try replica.root.child(deep) }
        #expect(error?.code == .invalidPath)
    }
}
