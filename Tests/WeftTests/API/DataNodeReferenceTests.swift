import Testing
import WeftCore

@_spi(Engine) @testable import Weft

@Suite struct DataNodeReferenceTests {
    let backend = MemoryBackend()

    @Test func theRootHasPathSlashNoKeyAndNoParent() {
        let root = backend.root
        #expect(root.path == "/")
        #expect(root.key == nil)
        #expect(root.parent == nil)
        #expect(root.description == "/")
    }

    @Test func relativePathsFollowTheSeedGrammar() throws {
        let bar = try backend.node("/foo/bar")
        #expect(bar.path == "/foo/bar")
        for path in ["geek", "/geek", "geek/", "/geek/"] {
            #expect(bar.relativeNode(for: path)?.path == "/foo/bar/geek")
        }
        for path in ["../geek/noob", "/../geek//noob/.", "../geek/./noob/."] {
            #expect(bar.relativeNode(for: path)?.path == "/foo/geek/noob")
        }
        #expect(bar.relativeNode(for: "../geek/../..//../..")?.path == "/")
        #expect(backend.root.relativeNode(for: "..") == backend.root)
    }

    @Test func illFormedPathsGiveNil() {
        let root = backend.root
        for path in ["a.b", "a/$x", "#", "[0]", "a]", "x\u{01}y", String(repeating: "k", count: 769)] {
            #expect(root.relativeNode(for: path) == nil, "\(path.prefix(20)) should be refused")
        }
        let deep = Array(repeating: "d", count: 33).joined(separator: "/")
        #expect(root.relativeNode(for: deep) == nil)
        let deepest = Array(repeating: "d", count: 32).joined(separator: "/")
        #expect(root.relativeNode(for: deepest)?.location.depth == 32)
    }

    @Test func keyAndParentDescribeTheNode() throws {
        let city = try backend.node("users/alice/address/city")
        #expect(city.key == "city")
        #expect(city.parent?.path == "/users/alice/address")
        #expect(city.parent?.parent?.parent?.parent?.path == "/")
        #expect(city.parent?.parent?.parent?.parent?.parent == nil)
        #expect(city.description == "/users/alice/address/city")
    }

    @Test func theSlashOperatorChainsThroughOptionals() {
        let node = backend.root / "users" / "alice" / "score"
        #expect(node?.path == "/users/alice/score")
        let broken = backend.root / "users" / "a.b" / "score"
        #expect(broken == nil)
    }

    @Test func referencesToTheSameNodeAreEqualAndHashAlike() throws {
        let a = try backend.node("users/alice")
        let b = try backend.node("users/bob/../alice")
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        let other = MemoryBackend()
        #expect(other.root / "users/alice" != a)
    }

    @Test func createChildGivesChronologicalUniquePushIDs() throws {
        let chat = try backend.node("chat")
        let children = try (0..<200).map { _ in try chat.createChild() }
        let keys = children.compactMap(\.key)
        #expect(Set(keys).count == 200)
        #expect(keys == keys.sorted(by: KeyOrder.precedes))
        #expect(keys.allSatisfy { $0.utf8.count == PushID.length })
        #expect(children.allSatisfy { $0.parent == chat })
    }

    @Test func createChildReadsAsNullUntilWritten() async throws {
        let child = try backend.root.createChild()
        #expect(try await child.value() == .null)
    }

    @Test func createChildFailsAtTheDeepestLevel() throws {
        let deepest = try backend.node(Array(repeating: "d", count: 32).joined(separator: "/"))
        #expect(throws: WeftError.self) { try deepest.createChild() }
    }
}
