import Testing

@testable import WeftCore

@Suite struct PathResolutionTests {
    let base: Path

    init() throws { base = try Path("/foo/bar") }

    // MARK: - The seed grammar of relativeNode(for:)

    @Test(arguments: ["geek", "/geek", "geek/", "/geek/"])
    func aSingleSegmentGoesDownToThatChild(relative: String) throws {
        let resolved = try base.resolving(relative)
        #expect(resolved.description == "/foo/bar/geek")
        #expect(resolved.keys == ["foo", "bar", "geek"])
    }

    @Test(arguments: ["../geek/noob", "/../geek//noob/.", "../geek/./noob/."])
    func dotDotGoesUpWhileDotAndEmptySegmentsDoNothing(relative: String) throws {
        #expect(try base.resolving(relative).description == "/foo/geek/noob")
    }

    @Test func goingUpPastTheRootEndsAtTheRoot() throws {
        let resolved = try base.resolving("../geek/../..//../..")
        #expect(resolved == .root)
        #expect(resolved.isRoot)
        #expect(resolved.description == "/")
    }

    @Test(arguments: ["..", "../..", "/../", "./.."])
    func dotDotAtTheRootStaysAtTheRoot(relative: String) throws {
        #expect(try Path.root.resolving(relative) == .root)
    }

    @Test func dotDotAtTheRootDoesNotSwallowTheNextSegment() throws {
        #expect(try Path.root.resolving("../../a").description == "/a")
    }

    @Test(arguments: ["", "/", "//", ".", "./.", "/./", "///.//"])
    func pathsMadeOfNoOpsLeaveTheNodeWhereItIs(relative: String) throws {
        #expect(try base.resolving(relative) == base)
    }

    @Test func pathStringsResolveAgainstTheRoot() throws {
        let expected = try Path(keys: ["a", "b"])
        #expect(try Path("a/b") == expected)
        #expect(try Path("/a/b/") == expected)
        #expect(try Path("/x/../a/b") == expected)
        #expect(try Path("//a/./b") == expected)
        #expect(try Path("/") == .root)
        #expect(try Path("") == .root)
    }

    @Test func segmentsThatAreNotValidKeysThrowNamingTheSegment() throws {
        for (relative, key) in [
            ("a.b", "a.b"), ("x/...", "..."), ("ok/$price", "$price"), ("#1", "#1"),
            ("list[0]", "list[0]"), ("tab\there", "tab\there"),
        ] {
            let error = coreError { try base.resolving(relative) }
            guard case .invalidKey(let named, _) = error else {
                Issue.record("\(relative) gave \(String(describing: error))")
                continue
            }
            #expect(named == key)
        }
    }

    // MARK: - Depth

    @Test func thirtyTwoLevelsAreAllowed() throws {
        let keys = (1...32).map { "k\($0)" }
        let deepest = try Path.root.resolving(keys.joined(separator: "/"))
        #expect(deepest.depth == 32)
        #expect(try Path(keys: keys) == deepest)
        #expect(try base.resolving((1...30).map(String.init).joined(separator: "/")).depth == 32)
    }

    @Test func thirtyThreeLevelsThrowPathTooDeep() throws {
        let keys = (1...33).map { "k\($0)" }
        let expected = CoreError.pathTooDeep(path: "/" + keys.joined(separator: "/"), depth: 33)
        #expect(coreError { try Path.root.resolving(keys.joined(separator: "/")) } == expected)
        #expect(coreError { try Path(keys: keys) } == expected)
        #expect(coreError { try Path(keys: Array(keys.dropLast())).child("k33") } == expected)
        let half = try Path(keys: Array(keys[..<16]))
        let rest = try Path(keys: Array(keys[16...]))
        #expect(coreError { try half.appending(rest) } == expected)
        guard
            case .pathTooDeep(_, let depth) = coreError({
                try base.resolving((1...31).map(String.init).joined(separator: "/"))
            })
        else {
            Issue.record("31 levels below a 2-level base should be too deep")
            return
        }
        #expect(depth == 33)
    }

    @Test func onlyTheResolvedDepthCountsNotTheDepthOnTheWay() throws {
        // The seed grammar walks segment by segment; the limit applies to the node reached.
        let down = (1...40).map { "k\($0)" }.joined(separator: "/")
        let up = Array(repeating: "..", count: 10).joined(separator: "/")
        #expect(try Path.root.resolving(down + "/" + up).depth == 30)
    }

    @Test func childAndAppendingValidateAndExtend() throws {
        #expect(try base.child("geek").description == "/foo/bar/geek")
        #expect(try base.appending(Path("x/y")).description == "/foo/bar/x/y")
        #expect(try base.appending(.root) == base)
        guard case .invalidKey(let key, _) = coreError({ try base.child("a.b") }) else {
            Issue.record("a.b is not a key")
            return
        }
        #expect(key == "a.b")
    }

    // MARK: - Navigation

    @Test func parentKeyAndDepthDescribeThePosition() throws {
        #expect(base.parent == (try Path("/foo")))
        #expect(base.parent?.parent == .root)
        #expect(Path.root.parent == nil)
        #expect(base.key == "bar")
        #expect(Path.root.key == nil)
        #expect(base.depth == 2)
        #expect(Path.root.depth == 0)
        #expect(!base.isRoot)
    }

    @Test func ancestorOrSelfComparesWholeKeysNotStringPrefixes() throws {
        let foo = try Path("/foo")
        let fooBarGeek = try Path("/foo/bar/geek")
        let fooBa = try Path("/foo/ba")
        #expect(Path.root.isAncestorOrSelf(of: base))
        #expect(foo.isAncestorOrSelf(of: base))
        #expect(base.isAncestorOrSelf(of: base))
        #expect(base.isAncestorOrSelf(of: fooBarGeek))
        #expect(!base.isAncestorOrSelf(of: foo))
        #expect(!fooBa.isAncestorOrSelf(of: base))
        #expect(!base.isAncestorOrSelf(of: fooBa))
        #expect(base.isRelated(to: foo))
        #expect(foo.isRelated(to: base))
        #expect(!base.isRelated(to: fooBa))
        #expect(Path.root.isRelated(to: fooBa))
    }

    @Test func commonAncestorIsTheLongestSharedPrefixOfKeys() throws {
        #expect(try Path("/a/b/c").commonAncestor(with: Path("/a/b/d")) == (try Path("/a/b")))
        #expect(try Path("/a/b").commonAncestor(with: Path("/a/bc")) == (try Path("/a")))
        #expect(try Path("/a").commonAncestor(with: Path("/b")) == .root)
        #expect(base.commonAncestor(with: base) == base)
        #expect(try base.commonAncestor(with: Path("/foo/bar/geek/noob")) == base)
        #expect(Path.root.commonAncestor(with: base) == .root)
    }

    @Test func relativeKeysAreTheKeysBelowAnAncestor() throws {
        #expect(try Path("/a").relativeKeys(of: Path("/a/b/c")).map(Array.init) == ["b", "c"])
        #expect(base.relativeKeys(of: base).map(Array.init) == [])
        #expect(try Path.root.relativeKeys(of: Path("/x")).map(Array.init) == ["x"])
        #expect(try Path("/a").relativeKeys(of: Path("/b")) == nil)
        #expect(try Path("/a/b").relativeKeys(of: Path("/a/bc")) == nil)
        #expect(try Path("/a/b").relativeKeys(of: Path("/a")) == nil)
    }

    // MARK: - Order

    @Test func pathsSortKeyByKeyWithEachParentBeforeItsChildren() throws {
        let sorted = try ["/", "/a", "/a/b", "/a/b/c", "/a/c", "/ab", "/b"].map { try Path($0) }
        #expect(sorted.shuffled().sorted() == sorted)
        for (earlier, later) in zip(sorted, sorted.dropFirst()) {
            #expect(earlier < later)
            #expect(!(later < earlier))
        }
        #expect(!(base < base))
    }

    @Test func keysCompareByTheirUTF8Bytes() throws {
        // Upper case before lower case, ASCII before any multi-byte scalar, and U+FFFD (EF BF BD) before
        // U+1F600 (F0 9F 98 80) although UTF-16 order would put the emoji first.
        let keys = ["-", "0", "9", "A", "Z", "_", "a", "z", "~", "é", "€", "\u{FFFD}", "😀"]
        let paths = try keys.map { try Path(keys: [$0]) }
        for (earlier, later) in zip(paths, paths.dropFirst()) { #expect(earlier < later) }
        #expect(paths.reversed().sorted() == paths)
    }
}
