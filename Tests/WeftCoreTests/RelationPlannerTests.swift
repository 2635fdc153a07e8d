import Testing

@testable import WeftCore

/// The relation planner's reads and writes, applied one plan after another (no concurrency here: the
/// races are in RelationConvergenceTests).
@Suite struct RelationPlannerTests {

    func path(_ text: String) throws -> Path { try Path(text) }

    /// A small world: people, tasks and boards, each with a name.
    func world() throws -> Value {
        try Value(
            json: #"{"people":{"p1":{"name":"ann"},"p2":{"name":"bob"}},"tasks":{"t1":{"title":"a"},"t2":{"title":"b"}},"#
                + #""boards":{"b1":{"name":"x"}}}"#)
    }

    func apply(_ plan: RelationPlanner.Plan, to state: inout Value) {
        for write in plan.writes {
            guard case .set(let path, let value) = write else { continue }
            state.write(value, at: path)
        }
    }

    func change(_ state: inout Value, _ body: (inout RelationPlanner) throws -> Void) throws -> RelationPlanner.Plan {
        let snapshot = state
        var planner = RelationPlanner { snapshot.value(at: $0) }
        try body(&planner)
        let plan = try planner.plan()
        apply(plan, to: &state)
        return plan
    }

    /// Every link node of the world's schema: tasks' `assignee` and `board`, boards' `tasks` entries.
    func links(_ state: Value) throws -> [Path] {
        var result: [Path] = []
        for (task, _) in state["tasks"].children {
            result.append(try path("/tasks/\(task.text)/assignee"))
            result.append(try path("/tasks/\(task.text)/board"))
        }
        for (board, value) in state["boards"].children {
            for (entry, _) in value["tasks"].children {
                result.append(try Path(keys: ["boards", board, "tasks", entry]))
            }
        }
        return result
    }

    func expectIntegrity(_ state: Value, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let violations = RelationIntegrity.violations(in: state, links: try links(state))
        #expect(violations.isEmpty, "\(violations)", sourceLocation: sourceLocation)
    }

    @Test("a link writes the link, the back-link and the clock, and reads what they depend on")
    func linkReadsAndWrites() throws {
        var state = try world()
        let plan = try change(&state) {
            try $0.link(source: path("/tasks/t1"), field: Path("assignee"), to: path("/people/p1"), rule: .nullify)
        }
        let backLink = try path("/people/p1/~in/%2Ftasks%2Ft1%2Fassignee")
        #expect(plan.reads == [try path("/tasks/t1/assignee"), backLink, RelationLayout.clockPath])
        #expect(
            plan.writes == [
                .set(try path("/tasks/t1/assignee"), .string("/people/p1")),
                .set(
                    backLink,
                    try Value(json: #"{"link":"/tasks/t1/assignee","source":"/tasks/t1","rule":"nullify"}"#)),
                .set(RelationLayout.clockPath, .int(1)),
            ])
        try expectIntegrity(state)
        let again = try change(&state) {
            try $0.link(source: path("/tasks/t1"), field: Path("assignee"), to: path("/people/p1"), rule: .nullify)
        }
        #expect(again.isEmpty)
    }

    @Test("relinking removes the back-link from the old target and counts the clock on")
    func relinkRemovesTheOldBackLink() throws {
        var state = try world()
        _ = try change(&state) {
            try $0.link(source: path("/tasks/t1"), field: Path("assignee"), to: path("/people/p1"), rule: .nullify)
        }
        let plan = try change(&state) {
            try $0.link(source: path("/tasks/t1"), field: Path("assignee"), to: path("/people/p2"), rule: .nullify)
        }
        #expect(plan.reads.contains(try path("/people/p1/~in/%2Ftasks%2Ft1%2Fassignee")))
        #expect(state.value(at: try path("/people/p1")) == (try Value(json: #"{"name":"ann"}"#)))
        #expect(state.value(at: try path("/tasks/t1/assignee")) == .string("/people/p2"))
        #expect(state.value(at: RelationLayout.clockPath) == .int(2))
        try expectIntegrity(state)
        _ = try change(&state) { try $0.unlink(source: path("/tasks/t1"), field: Path("assignee")) }
        #expect(state["people"]["p2"] == (try Value(json: #"{"name":"bob"}"#)))
        #expect(state["tasks"]["t1"]["assignee"].isNull)
        try expectIntegrity(state)
    }

    @Test("an object that held only a link still exists once the link is nullified, for the links into it")
    func objectOfOnlyALinkOutlivesItsLink() throws {
        // Found by weft-sim seed 800: t3 held nothing but its assignee; deleting the assignee nullified it,
        // and t3, left with back-links alone, no longer counted as existing under t1's link to it.
        var state = try world()
        _ = try change(&state) {
            try $0.link(source: path("/tasks/t3"), field: Path("assignee"), to: path("/people/p1"), rule: .nullify)
        }
        _ = try change(&state) {
            try $0.link(source: path("/tasks/t1"), field: Path("board"), to: path("/tasks/t3"), rule: .cascade)
        }
        _ = try change(&state) { try $0.delete([path("/people/p1")]) }
        #expect(state["tasks"]["t3"]["assignee"].isNull)
        #expect(RelationLayout.exists(state["tasks"]["t3"]))
        try expectIntegrity(state)
        var planner = RelationPlanner { [state] in state.value(at: $0) }
        try planner.link(source: path("/tasks/t2"), field: Path("board"), to: path("/tasks/t3"), rule: .nullify)
        #expect(try !planner.plan().isEmpty)
    }

    @Test("a link to a missing object is refused and plans nothing")
    func linkToMissingTarget() throws {
        let state = try world()
        var planner = RelationPlanner { state.value(at: $0) }
        #expect(throws: RelationError.targetMissing(try path("/people/p9"))) {
            try planner.link(source: path("/tasks/t1"), field: Path("assignee"), to: path("/people/p9"), rule: .nullify)
        }
        #expect(try planner.plan().isEmpty)
    }

    @Test("deleting a target nullifies its nullify links and deletes the sources of its cascade links")
    func nullifyAndCascade() throws {
        var state = try world()
        _ = try change(&state) {
            try $0.link(source: path("/tasks/t1"), field: Path("assignee"), to: path("/people/p1"), rule: .nullify)
            try $0.link(source: path("/tasks/t2"), field: Path("assignee"), to: path("/people/p1"), rule: .nullify)
            try $0.link(source: path("/tasks/t1"), field: Path("board"), to: path("/boards/b1"), rule: .cascade)
            try $0.insert(source: path("/boards/b1"), field: Path("tasks"), target: path("/tasks/t1"), rule: .nullify)
            try $0.insert(source: path("/boards/b1"), field: Path("tasks"), target: path("/tasks/t2"), rule: .nullify)
        }
        try expectIntegrity(state)
        // Deleting the person nullifies both assignees and keeps the tasks.
        var afterPerson = state
        let plan = try change(&afterPerson) { try $0.delete([path("/people/p1")]) }
        #expect(plan.reads.contains(try path("/tasks/t1/assignee")))
        #expect(afterPerson["tasks"]["t1"]["assignee"].isNull)
        #expect(afterPerson["tasks"]["t2"]["title"] == .string("b"))
        try expectIntegrity(afterPerson)
        // Deleting the board cascades to t1 (its `board` link says so), whose assignee's back-link goes.
        var afterBoard = state
        _ = try change(&afterBoard) { try $0.delete([path("/boards/b1")]) }
        #expect(afterBoard["tasks"]["t1"].isNull)
        #expect(afterBoard["tasks"]["t2"]["assignee"] == .string("/people/p1"))
        #expect(afterBoard["people"]["p1"]["~in"].children.count == 1)
        try expectIntegrity(afterBoard)
        // Deleting a task removes its entry from the board's references and its back-links elsewhere.
        var afterTask = state
        _ = try change(&afterTask) { try $0.delete([path("/tasks/t2")]) }
        #expect(afterTask["boards"]["b1"]["tasks"].children.count == 1)
        try expectIntegrity(afterTask)
    }

    @Test("cascades through a cycle delete each object once and end")
    func cascadeCycle() throws {
        var state = try Value(json: #"{"n":{"a":{"v":1},"b":{"v":2},"c":{"v":3},"d":{"v":4}}}"#)
        _ = try change(&state) {
            try $0.link(source: path("/n/a"), field: Path("next"), to: path("/n/b"), rule: .cascade)
            try $0.link(source: path("/n/b"), field: Path("next"), to: path("/n/c"), rule: .cascade)
            try $0.link(source: path("/n/c"), field: Path("next"), to: path("/n/a"), rule: .cascade)
            try $0.link(source: path("/n/d"), field: Path("next"), to: path("/n/a"), rule: .nullify)
            try $0.link(source: path("/n/a"), field: Path("me"), to: path("/n/a"), rule: .cascade)
        }
        let links = ["a", "b", "c", "d"].flatMap { [try! Path("/n/\($0)/next"), try! Path("/n/\($0)/me")] }
        #expect(RelationIntegrity.violations(in: state, links: links).isEmpty)
        let plan = try change(&state) { try $0.delete([path("/n/b")]) }
        #expect(state == (try Value(json: #"{"n":{"d":{"v":4}},"~relations":2}"#)))
        #expect(plan.writes.filter { if case .set(_, .null) = $0 { true } else { false } }.count == 4)
    }

    @Test("objects deleted together need no clean-up between them, and missing ones are passed over")
    func deleteTogether() throws {
        var state = try world()
        _ = try change(&state) {
            try $0.link(source: path("/tasks/t1"), field: Path("assignee"), to: path("/people/p1"), rule: .nullify)
            try $0.link(source: path("/tasks/t2"), field: Path("assignee"), to: path("/people/p2"), rule: .nullify)
        }
        let plan = try change(&state) { try $0.delete([path("/tasks/t1"), path("/people/p1"), path("/people/p9")]) }
        #expect(plan.writes.count == 3)
        #expect(state["people"]["p2"]["~in"].children.count == 1)
        try expectIntegrity(state)
        let deleteTasks = try change(&state) { try $0.delete([path("/tasks"), path("/tasks/t2")]) }
        #expect(deleteTasks.writes.contains(.set(try path("/people/p2/~in"), .null)) == false)
        #expect(state["people"]["p2"] == (try Value(json: #"{"name":"bob"}"#)))
        try expectIntegrity(state)
    }

    @Test("an entry keyed by a link is removed whole when its key object is deleted")
    func associatedEntryClearedOnDelete() throws {
        var state = try world()
        let entry = try path("/boards/b1/roles/%2Fpeople%2Fp1")
        _ = try change(&state) {
            try $0.link(
                source: path("/boards/b1"), field: Path("roles/%2Fpeople%2Fp1/key"), to: path("/people/p1"),
                rule: .nullify, clearing: entry)
            try $0.write(.string("owner"), at: entry.child("value"))
        }
        #expect(state.value(at: entry) == (try Value(json: #"{"key":"/people/p1","value":"owner"}"#)))
        let link = try entry.child("key")
        #expect(RelationIntegrity.violations(in: state, links: [link]).isEmpty)
        _ = try change(&state) { try $0.delete([path("/people/p1")]) }
        #expect(state["boards"]["b1"] == (try Value(json: #"{"name":"x"}"#)))
        #expect(RelationIntegrity.violations(in: state, links: [link]).isEmpty)
        var planner = RelationPlanner { state.value(at: $0) }
        #expect(throws: RelationError.invalidPath(try path("/boards/b2"))) {
            try planner.link(
                source: path("/boards/b1"), field: Path("roles/x/key"), to: path("/people/p2"), rule: .nullify,
                clearing: path("/boards/b2"))
        }
    }

    @Test("paths that cannot name a link are refused with a typed error")
    func invalidPaths() throws {
        let state = try world()
        var planner = RelationPlanner { state.value(at: $0) }
        #expect(throws: RelationError.invalidPath(.root)) { try planner.delete([.root]) }
        #expect(throws: RelationError.invalidPath(try path("/people/p1/~in/x"))) {
            try planner.link(source: path("/tasks/t1"), field: Path("a"), to: path("/people/p1/~in/x"), rule: .nullify)
        }
        let long = try Path(keys: [String(repeating: "k", count: 760)])
        var deep = RelationPlanner { _ in try Value(json: #"{"name":"x"}"#) }
        #expect(throws: RelationError.pathTooLong(try long.child("field"))) {
            try deep.link(source: long, field: Path("field"), to: path("/people/p1"), rule: .nullify)
        }
        #expect(RelationLayout.escape(try path("/a%b/c")) == "%2Fa%25b%2Fc")
    }

    @Test("any sequence of planned changes applied in turn keeps integrity")
    func serialSequencesKeepIntegrity() throws {
        var rng = SeededGenerator(seed: 38)
        let objects = (0..<6).map { try! Path("/o/o\($0)") }
        for _ in 0..<20 {
            var state = Value.null
            for step in 0..<60 {
                let object = objects[Int(rng.below(6))]
                let other = objects[Int(rng.below(6))]
                // Links start from objects that exist (an app links from a stored model).
                if !RelationLayout.exists(state.value(at: object)) {
                    state.write(.string("n\(step)"), at: try object.child("name"))
                }
                do {
                    _ = try change(&state) { planner in
                        switch rng.below(7) {
                        case 0, 1:
                            // Creation is a plain write of a field; it never touches back-links.
                            _ = planner
                        case 2: try planner.link(source: object, field: Path("one"), to: other, rule: .cascade)
                        case 3: try planner.insert(source: object, field: Path("many"), target: other, rule: .nullify)
                        case 4: try planner.remove(source: object, field: Path("many"), target: other)
                        case 5: try planner.unlink(source: object, field: Path("one"))
                        default: try planner.delete([object])
                        }
                    }
                } catch RelationError.targetMissing {
                }
                if step % 3 == 0 { state.write(.string("n\(step)"), at: try object.child("name")) }
                var links: [Path] = []
                for object in objects {
                    links.append(try object.child("one"))
                    for (entry, _) in state.value(at: try object.child("many")).children {
                        links.append(try object.child("many").child(entry))
                    }
                }
                let violations = RelationIntegrity.violations(in: state, links: links)
                #expect(violations.isEmpty, "\(violations) in \(state.jsonString())")
                if !violations.isEmpty { return }
            }
        }
    }
}
