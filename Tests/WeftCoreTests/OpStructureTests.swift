import Testing
import WeftTestSupport

@testable import WeftCore

/// The structural helpers around ops: anchors, blind and reading kinds, merge children, the registry,
/// replica ids and the texts of errors and rejections.
@Suite struct OpStructureTests {
    let origin = ReplicaID(rawValue: 0xABC)!

    func op(_ kind: OpKind, path: String = "/") throws -> Op {
        try .make(kind, at: path, origin: origin, millis: 1, sequence: 1)
    }

    @Test func opsKeepValueSemanticsThoughCopiesShareTheirBody() throws {
        let original = try op(.set(.int(1)), path: "/a")
        var changed = original
        changed.kind = .set(.int(2))
        changed.path = try Path("/b")
        // The copy changed alone: the original still holds its own path and kind.
        #expect(original.kind == .set(.int(1)))
        #expect(original.path == (try Path("/a")))
        #expect(changed.kind == .set(.int(2)))
        #expect(changed.path == (try Path("/b")))
        #expect(original != changed)
        // Equal ops built apart are equal and hash alike, body shared or not.
        let twin = try op(.set(.int(1)), path: "/a")
        #expect(twin == original)
        #expect(twin.hashValue == original.hashValue)
        #expect(Set([original, twin, original]).count == 1)
        var later = original
        later.sequence = 2
        #expect(later != original)
    }

    @Test func anOpIsAnchoredAtItsPathAndABatchAtEachDistinctPartPath() throws {
        #expect(try op(.set(.int(1)), path: "/a/b").anchors == [try Path("/a/b")])
        let batch = try op(
            .batch([
                .set(try Path("/x/1"), .int(1)),
                .increment(try Path("/x/2"), by: .int(1), from: .int(0)),
                .set(try Path("/x/1"), .int(2)),
                .merge(try Path("/y"), [MergeChild(relative: try Path("a/b"), value: .int(3))]),
                .merge(try Path("/z"), []),
            ]), path: "/")
        // A merge touches only the children it lists: an empty merge touches nothing.
        #expect(batch.anchors == [try Path("/x/1"), try Path("/x/2"), try Path("/y/a/b")])
        let merge = try op(.merge([MergeChild(relative: try Path("p"), value: .int(1))]), path: "/m")
        #expect(merge.anchors == [try Path("/m/p")])
        #expect(batch.origin == origin)
    }

    @Test func onlySetsAndMergesAreBlindWrites() throws {
        #expect(!(try op(.set(.int(1))).readsState))
        #expect(!(try op(.merge([])).readsState))
        #expect(try op(.increment(by: .int(1), from: .int(0))).readsState)
        #expect(try op(.transaction(read: VersionVector(), result: .null)).readsState)
        #expect(try op(.call(FunctionCall(name: "f", version: 1, arguments: .null))).readsState)
        #expect(!(try op(.batch([.set(.root, .int(1))])).readsState))
        #expect(
            try op(.batch([.set(.root, .int(1)), .increment(try Path("/n"), by: .int(1), from: .int(0))])).readsState)
    }

    @Test func mergeChildrenAreSortedAndMayNotOverlap() throws {
        let sorted = try MergeChild.validated([
            MergeChild(relative: try Path("b"), value: .int(1)),
            MergeChild(relative: try Path("a/z"), value: .int(2)),
            MergeChild(relative: try Path("a/b"), value: .null),
        ])
        #expect(sorted.map(\.relative.description) == ["/a/b", "/a/z", "/b"])
        for overlapping in [["a", "a/b"], ["a/b/c", "a/b"], ["k", "k"]] {
            let error = coreError {
                try MergeChild.validated(overlapping.map { MergeChild(relative: try Path($0), value: .int(1)) })
            }
            guard case .invalidOp(let reason) = error else {
                Issue.record("\(overlapping) was accepted")
                continue
            }
            #expect(reason.contains("overlap"))
        }
        #expect(
            coreError { try MergeChild.validated([MergeChild(relative: .root, value: .int(1))]) }
                == .invalidOp(reason: "a merge child path cannot be empty"))
    }

    @Test func mergeChildrenAreLimitedInNumber() throws {
        let children = (0...CoreLimits.batchPartsMax).map {
            MergeChild(relative: Path(uncheckedKeys: ["k\($0)"]), value: .int(1))
        }
        guard case .invalidOp = coreError({ try MergeChild.validated(children) }) else {
            Issue.record("a merge of \(children.count) children was accepted")
            return
        }
    }

    @Test func aWriteKnowsItsPath() throws {
        let path = try Path("/p/q")
        #expect(Write.set(path, .null).path == path)
        #expect(Write.merge(path, []).path == path)
        #expect(Write.increment(path, by: .int(1), from: .int(0)).path == path)
    }

    @Test func theRegistryFindsFunctionsByNameAndVersion() {
        var registry = FunctionRegistry()
        registry.register(name: "double", version: 1) { value, _ in Number(value).flatMap { $0.adding($0) }?.value }
        #expect(registry.contains(name: "double", version: 1))
        #expect(!registry.contains(name: "double", version: 2))
        #expect(!registry.contains(name: "Double", version: 1))
        #expect(registry.function(name: "double", version: 1)?(.int(4), .null) == .int(8))
        registry.register(name: "double", version: 1) { _, _ in .string("replaced") }
        #expect(registry.function(name: "double", version: 1)?(.int(4), .null) == .string("replaced"))
    }

    @Test func replicaIDsPrintAsSixteenHexDigitsAndParseBack() {
        let id = ReplicaID(rawValue: 0xAB)!
        #expect(id.description == "00000000000000ab")
        #expect(ReplicaID(hex: id.description) == id)
        #expect(ReplicaID(hex: "ab") == id)
        #expect(ReplicaID(hex: "ffffffffffffffff")?.rawValue == .max)
        #expect(ReplicaID(rawValue: 0) == nil)
        #expect(ReplicaID(hex: "0000000000000000") == nil)
        #expect(ReplicaID(hex: "xyz") == nil)
        #expect(ReplicaID(hex: "1ffffffffffffffff") == nil)
        #expect(ReplicaID(rawValue: 1)! < ReplicaID(rawValue: 2)!)
    }

    @Test func rejectionsAndErrorsNameWhatWentWrong() throws {
        let path = try Path("/a/b")
        #expect(Rejection.notANumber(path).description.contains("/a/b"))
        #expect(Rejection.nonFinite(path).description.contains("/a/b"))
        #expect(Rejection.staleRead(path).description.contains("/a/b"))
        #expect(Rejection.refusedByFunction(name: "transfer").description.contains("transfer"))
        #expect(CoreError.pathTooDeep(path: "/x/y", depth: 33).description.contains("33"))
        #expect(CoreError.invalidJSON(offset: 17, reason: "bad").description.contains("17"))
        #expect(CoreError.malformedEncoding(offset: 9, reason: "replica id 0").description.contains("replica id 0"))
        let drift = CoreError.clockDrift(aheadMillis: 90_000, maxMillis: 60_000).description
        #expect(drift.contains("90000"))
        #expect(drift.contains("60000"))
        #expect(CoreError.invalidStamp(text: "zz").description.contains("zz"))
    }
}
