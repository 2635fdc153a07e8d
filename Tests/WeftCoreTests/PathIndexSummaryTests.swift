import Testing
import WeftTestSupport

@testable import WeftCore

/// The per-node summaries of the path index that the fold's transaction rule (and the merge engine) read.
@Suite struct PathIndexSummaryTests {
    let alice = ReplicaID(rawValue: 0xA)!
    let bob = ReplicaID(rawValue: 0xB)!

    func op(_ origin: ReplicaID, at millis: UInt64, sequence: UInt64, _ path: String, _ kind: OpKind) throws -> Op {
        try .make(kind, at: path, origin: origin, millis: millis, sequence: sequence)
    }

    func stamp(_ millis: UInt64, _ origin: ReplicaID) -> Stamp { Stamp(millis: millis, counter: 0, replica: origin) }

    @Test func ownStampsStayAscendingWhateverTheInsertionOrder() throws {
        let index = PathIndex()
        for millis: UInt64 in [5, 1, 9, 3, 7] {
            index.insert(try op(alice, at: millis, sequence: millis, "/a", .set(.int(1))))
        }
        let node = try #require(index.node(at: ["a"]))
        #expect(node.own.all.map(\.stamp.millis) == [1, 3, 5, 7, 9])
        #expect(node.ownMax == stamp(9, alice))
        #expect(node.ownFirst(after: stamp(3, alice))?.stamp == stamp(5, alice))
        #expect(node.ownFirst(after: stamp(0, alice))?.stamp == stamp(1, alice))
        #expect(node.ownFirst(after: stamp(9, alice)) == nil)
    }

    @Test func onlyNodesWithFailingBatchesBelowAreWalkedForThem() throws {
        let index = PathIndex()
        for (position, path) in ["/wide/x1/y", "/wide/x2", "/wide/x3", "/other"].enumerated() {
            let millis = UInt64(position + 1)
            index.insert(try op(alice, at: millis, sequence: millis, path, .increment(by: .int(1), from: .int(0))))
        }
        func visited(at keys: ArraySlice<Key>) -> [Int] {
            var counts: [Int] = []
            index.forEachFailing(at: keys) { counts.append($0.failingBatches.count) }
            return counts
        }
        #expect(visited(at: []) == [])
        index.setFailing(true, batch: stamp(10, bob), at: ["wide", "x1", "y"])
        index.setFailing(true, batch: stamp(11, bob), at: ["wide", "x3"])
        // The root, /wide, then its two children with failing batches (not /wide/x2, not /other).
        #expect(visited(at: []).count == 5)
        #expect(visited(at: ["wide"]).reduce(0, +) == 2)
        #expect(visited(at: ["other"]) == [])
        #expect(visited(at: ["wide", "x2"]) == [])
        #expect(visited(at: ["wide", "x1"]) == [0, 1])
        index.setFailing(false, batch: stamp(10, bob), at: ["wide", "x1", "y"])
        #expect(visited(at: ["wide", "x1"]) == [])
        #expect(visited(at: ["wide"]) == [0, 1])
        index.setFailing(false, batch: stamp(11, bob), at: ["wide", "x3"])
        #expect(visited(at: []) == [])
        #expect(index.root.failingBelow == 0)
    }

    @Test func summariesRiseAlongThePathOfEachAnchor() throws {
        let index = PathIndex()
        index.insert(try op(alice, at: 1, sequence: 1, "/a/b", .set(.int(1))))
        index.insert(try op(bob, at: 2, sequence: 4, "/a", .increment(by: .int(1), from: .int(0))))
        let root = index.root
        let a = try #require(index.node(at: ["a"]))
        let b = try #require(index.node(at: ["a", "b"]))
        #expect(root.subtreeMax == stamp(2, bob))
        #expect(root.descendantMax == stamp(2, bob))
        #expect(a.subtreeMax == stamp(2, bob))
        #expect(a.descendantMax == stamp(1, alice))
        #expect(a.ownNonIncrementMax == nil)
        #expect(b.ownNonIncrementMax == stamp(1, alice))
        #expect(a.subtreeTransactionMax == nil)
        #expect(b.subtreeTransactionMax == nil)
        index.insert(try op(bob, at: 3, sequence: 5, "/a/b", .transaction(read: VersionVector(), result: .int(2))))
        #expect(a.subtreeTransactionMax == stamp(3, bob))
        #expect(b.subtreeTransactionMax == stamp(3, bob))
        #expect(a.incrementMagnitude == 1)
        #expect(index.node(at: ["zz"]) == nil)
    }

    @Test func scalarsAreMarkedWhereAWriteMayLeaveOne() throws {
        let index = PathIndex()
        index.insert(try op(alice, at: 1, sequence: 1, "/u", .set(try Value(json: #"{"name":"a","p":{"x":1}}"#))))
        index.insert(try op(alice, at: 2, sequence: 2, "/n", .increment(by: .int(1), from: .int(0))))
        #expect(index.node(at: ["u", "name"])?.mayBeScalar == true)
        #expect(index.node(at: ["u", "p", "x"])?.mayBeScalar == true)
        #expect(index.node(at: ["u", "p"])?.mayBeScalar == false)
        #expect(index.node(at: ["u"])?.mayBeScalar == false)
        #expect(index.node(at: ["n"])?.mayBeScalar == true)
    }

    @Test func coverageLooksAtAncestorsSelfAndDescendantsButNotSiblings() throws {
        let index = PathIndex()
        index.insert(try op(bob, at: 1, sequence: 1, "/t/x/deep", .set(.int(1))))
        index.insert(try op(bob, at: 2, sequence: 2, "/sibling", .set(.int(1))))
        index.insert(
            try op(alice, at: 3, sequence: 1, "/", .merge([MergeChild(relative: try Path("t/z"), value: .int(1))])))
        index.insert(
            try op(
                alice, at: 4, sequence: 2, "/", .merge([MergeChild(relative: try Path("elsewhere"), value: .int(1))])))
        let t = try Path("/t")
        #expect(!index.isCovered(path: t, by: VersionVector([alice: 1])))
        #expect(!index.isCovered(path: t, by: VersionVector([bob: 1])))
        // A merge at the root touches only its listed children: the second one is not about /t.
        #expect(index.isCovered(path: t, by: VersionVector([alice: 1, bob: 1])))
        #expect(index.isCovered(path: try Path("/t/y"), by: VersionVector([:])))
        #expect(!index.isCovered(path: try Path("/sibling"), by: VersionVector([alice: 1, bob: 1])))
    }

    @Test func callsAreCountedAndRemovalTakesStampsOut() throws {
        let index = PathIndex()
        let call = try op(alice, at: 1, sequence: 1, "/c", .call(FunctionCall(name: "f", version: 1, arguments: .null)))
        let set = try op(alice, at: 2, sequence: 2, "/c", .set(.int(1)))
        index.insert(call)
        index.insert(set)
        let node = try #require(index.node(at: ["c"]))
        #expect(node.callCount == 1)
        index.removeCompacted([call], upTo: call.stamp)
        #expect(node.callCount == 0)
        #expect(node.own.all.map(\.stamp) == [set.stamp])
    }

    /// A node reads its few own ops for the transaction rule, and keeps their highest sequence per origin
    /// once it holds more than ``PathIndex/Node/ownScanMax``; either way, and after a compaction takes
    /// some out of the own list, coverage (at the node, above a descendant's path, and the subtree
    /// summary gathered later) answers as if every op were kept.
    @Test(arguments: [3, PathIndex.Node.ownScanMax + 5])
    func ownSequencesCoverTheSameWhetherReadOrKept(count: Int) throws {
        let index = PathIndex()
        for sequence in 1...UInt64(count) {
            let origin = sequence % 2 == 0 ? alice : bob
            index.insert(try op(origin, at: sequence, sequence: sequence, "/n", .set(.int(1))))
        }
        let node = try #require(index.node(at: ["n"]))
        #expect(node.keepsOwnSequences == (count > PathIndex.Node.ownScanMax))
        let last = UInt64(count)
        let lastAlice = last % 2 == 0 ? last : last - 1
        let lastBob = last % 2 == 0 ? last - 1 : last
        let full = VersionVector([alice: lastAlice, bob: lastBob])
        func check() throws {
            #expect(index.isCovered(path: try Path("/n"), by: full))
            #expect(index.isCovered(path: try Path("/n/below"), by: full))
            #expect(!index.isCovered(path: try Path("/n"), by: VersionVector([alice: lastAlice, bob: lastBob - 2])))
            #expect(
                !index.isCovered(path: try Path("/n/below"), by: VersionVector([alice: lastAlice - 2, bob: lastBob])))
        }
        try check()
        // A compaction takes every own op but the last out of the list.
        node.removeOwn(through: stamp(last - 1, alice))
        #expect(node.own.count == 1)
        try check()
        var gathered: [ReplicaID: UInt64] = [:]
        index.root.subtreeSequences.forEach { gathered[$0.origin] = $0.sequence }
        #expect(gathered == [alice: lastAlice, bob: lastBob])
    }
}
