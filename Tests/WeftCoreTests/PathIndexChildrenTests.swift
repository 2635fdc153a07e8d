import Testing

@testable import WeftCore

/// The open-addressed table of a path index node's children, and the prefetching walks over it.
@Suite struct PathIndexChildrenTests {
    let alice = ReplicaID(rawValue: 0xA)!

    @Test(arguments: [1, 3, 4, 7, 100, 5_000])
    func everyChildIsFoundUnderItsKeyAsTheTableGrows(count: Int) {
        let parent = PathIndex.Node(key: "parent")
        var made: [Key: ObjectIdentifier] = [:]
        for number in 0..<count {
            let key = Key(unchecked: "k\(number)")
            let child = parent.child(creating: key)
            made[key] = ObjectIdentifier(child)
            // Asking again finds the same child, whatever grew since.
            #expect(ObjectIdentifier(parent.child(creating: key)) == made[key])
        }
        for (key, identifier) in made {
            let found = parent.children[key]
            #expect(found.map(ObjectIdentifier.init) == identifier)
            #expect(found?.key == key)
        }
        #expect(parent.children["absent"] == nil)
        #expect(parent.children.values.count == count)
        let keyed = parent.children.keyed
        #expect(keyed.map(\.key) == made.keys.sorted())
        #expect(keyed.allSatisfy { made[$0.key] == ObjectIdentifier($0.node) })
    }

    @Test func aNodeWithoutChildrenFindsNone() {
        let node = PathIndex.Node(key: "leaf")
        #expect(node.children["any"] == nil)
        #expect(node.children.keyed.isEmpty)
        node.children.prefetchSlot(of: "any")
        #expect(node.children.probe("any") == nil)
    }

    @Test func keysWhoseTextsShareAHashPrefixStayApart() {
        // Push ids of one millisecond differ only at their end.
        let parent = PathIndex.Node(key: "chat")
        let keys = (0..<300).map { Key(unchecked: "-NzQ1aBcDeFgHiJkL\($0)") }
        let children = keys.map { ObjectIdentifier(parent.child(creating: $0)) }
        #expect(keys.map { parent.children[$0].map(ObjectIdentifier.init) } == children)
        #expect(Set(children).count == keys.count)
    }

    @Test func prefetchingWalksChangeNothing() throws {
        let index = PathIndex()
        var ops: [Op] = []
        for millis: UInt64 in 1...40 {
            let path = try Path("/items/i\(millis % 7)/f\(millis % 3)")
            ops.append(
                Op(
                    stamp: Stamp(millis: millis, counter: 0, replica: alice), sequence: millis, path: path,
                    kind: .set(.int(Int64(millis)))))
        }
        for op in ops.prefix(20) { index.insert(op) }
        let before = index.root.children.keyed.map(\.key)
        let itemsBefore = index.node(at: ["items"])?.children.keyed.map(\.key)
        // Half the paths exist, half end their walks at a missing key, and the root path ends at once;
        // merges walk on to their children (some there, some not), and a batch stops at its path.
        let merges = try (0..<4).map { number in
            Op(
                stamp: Stamp(millis: 50 + UInt64(number), counter: 0, replica: alice), sequence: 50 + UInt64(number),
                path: try Path("/items/i\(number)"),
                kind: .merge([
                    MergeChild(relative: try Path("f1"), value: .int(1)),
                    MergeChild(relative: try Path("deep/x"), value: .int(2)),
                ]))
        }
        let batch = Op(
            stamp: Stamp(millis: 60, counter: 0, replica: alice), sequence: 60, path: .root,
            kind: .batch([.set(try Path("/items/i1/f2"), .int(3)), .set(try Path("/other"), .int(4))]))
        let withRoot =
            ops + merges + [
                batch,
                Op(
                    stamp: Stamp(millis: 99, counter: 0, replica: alice), sequence: 99, path: .root, kind: .set(.int(1))
                ),
            ]
        let order = Array(withRoot.indices.reversed())
        var prefetcher = PathIndex.Prefetcher(index: index)
        prefetcher.warmUp(withRoot, in: order)
        for applied in order.indices { prefetcher.advance(past: applied, of: withRoot, in: order) }
        #expect(index.root.children.keyed.map(\.key) == before)
        #expect(index.node(at: ["items"])?.children.keyed.map(\.key) == itemsBefore)
        #expect(index.arrivals == 20)
    }
}

extension PathIndex.Node {
    /// The child under `key`, made when missing (the engine's walks hold children unretained instead).
    fileprivate func child(creating key: Key) -> PathIndex.Node {
        children.unretained(creating: key).takeUnretainedValue()
    }
}
