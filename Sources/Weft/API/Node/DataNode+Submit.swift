import WeftCore

// The synchronous core of every write: convert and check the input, submit one op, and say what the
// caller gets back. The async, callback and Combine forms all wait on the receipt these return.

extension DataNode {
    func submitSet(_ value: Value, at time: WeftTime) throws -> Submitted<WriteReceipt> {
        let receipt = try access.submit(path: location, kind: .set(value), at: time)
        access.state.noteBlindWrite(at: [location])
        return Submitted(receipt: receipt, output: receipt)
    }

    func submitMerge(_ children: [MergeChild], at time: WeftTime) throws -> Submitted<WriteReceipt> {
        let checked = try ValueCheck.mergeChildren(children, under: location)
        let receipt = try access.submit(path: location, kind: .merge(checked), at: time)
        access.state.noteBlindWrite(at: checked.compactMap { try? location.appending($0.relative) })
        return Submitted(receipt: receipt, output: receipt)
    }

    func submitPush(_ value: Value, at time: WeftTime) throws -> Submitted<DataNode> {
        guard location.depth < CoreLimits.pathDepthMax else {
            throw WeftError(
                .invalidPath, "a push below \(path) would be deeper than \(CoreLimits.pathDepthMax) levels",
                path: path)
        }
        // Checked one level down: the child's key is not known yet, but its depth is.
        let placeholder = try WeftError.mapping(path: path) { try location.child(Path.pushPlaceholderKey) }
        let checked = try ValueCheck.validated(value, at: placeholder)
        let (key, receipt) = try access.submitPush(parent: location, value: checked, at: time)
        let child = try WeftError.mapping(path: path) { try location.child(key) }
        access.state.noteBlindWrite(at: [child])
        return Submitted(receipt: receipt, output: node(at: child))
    }

    func submitIncrement(from start: Number, by step: Number, at time: WeftTime) throws -> Submitted<IncrementResult> {
        try Number.checkFinite(start, step, path: path)
        let receipt = try access.submit(path: location, kind: .increment(by: step, from: start), at: time)
        // The value just after the op applied (a concurrent write may already show in it).
        let result = Number(access.backend.value(at: location)) ?? start.adding(step) ?? step
        return Submitted(receipt: receipt, output: IncrementResult(value: result, receipt: receipt))
    }

    func submitCopy(to destination: DataNode, at time: WeftTime) throws -> Submitted<Value> {
        try access.checkOwns(destination)
        try access.checkOpen()
        let value = access.backend.value(at: location)
        let checked = try ValueCheck.validated(value, at: destination.location)
        let receipt = try destination.submitSet(checked, at: time).receipt
        return Submitted(receipt: receipt, output: checked)
    }

    // MARK: - Conversions

    /// An `Encodable` value (or nil) as a checked value for this node.
    func encoded<T: Encodable>(_ value: T?) throws -> Value {
        try access.state.coding.encode(value, at: location)
    }

    /// A raw JSON object graph as a checked value for this node.
    func rawValue(_ json: Any?) throws -> Value {
        try ValueCheck.validated(try RawJSON.value(of: json, at: location), at: location)
    }

    /// JSON text as a checked value for this node.
    func parsedValue(_ json: String) throws -> Value {
        let parsed = try WeftError.mapping(path: path) { try Value(json: json) }
        return try ValueCheck.validated(parsed, at: location)
    }

    /// The members of an object value as merge children; a merge needs an object (or an array).
    func mergeChildren(of value: Value) throws -> [MergeChild] {
        guard case .object(let members) = value else {
            throw WeftError(
                .invalidValue, "merge needs a JSON object (or array) with at least one member; got \(value.kindName)",
                path: path)
        }
        return try members.map { key, member in
            MergeChild(relative: try WeftError.mapping(path: path) { try Path(keys: [key.text]) }, value: member)
        }
    }

    /// The members of a raw dictionary as merge children; keys may be deeper relative paths (`"a/b"`).
    func rawMergeChildren(_ json: [String: Any]) throws -> [MergeChild] {
        guard !json.isEmpty else {
            throw WeftError(.invalidValue, "merge needs at least one member", path: path)
        }
        return try json.map { key, member in
            let segments = key.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
            let relative = try WeftError.mapping(path: path) { try Path(keys: segments) }
            let full = try WeftError.mapping(path: path) { try location.appending(relative) }
            return MergeChild(relative: relative, value: try RawJSON.value(of: member, at: full))
        }
    }
}

extension Path {
    /// A key of push-id length, to check the depth of a value before its push id is known.
    static let pushPlaceholderKey = String(repeating: "-", count: PushID.length)
}

extension Number {
    /// Fails unless every operand of an increment is finite.
    static func checkFinite(_ numbers: Number..., path: String) throws {
        for number in numbers where !number.doubleValue.isFinite {
            throw WeftError(.invalidValue, "numbers must be finite; got \(number)", path: path)
        }
    }
}

extension Value {
    /// The JSON kind of the value, for messages.
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .object: return "an object"
        }
    }
}
