/// Registered deterministic functions that ``OpKind/call(_:)`` ops name.
///
/// A function is a pure function of the current value of the node it is called on and its arguments;
/// it returns the node's new value, or nil to refuse (the op is then rejected). Every replica registers
/// the same functions under the same versioned names.
///
/// ```swift
/// var registry = FunctionRegistry()
/// registry.register(name: "transfer", version: 1) { accounts, args in ... }
/// ```
public struct FunctionRegistry: Sendable {
    /// The signature of a registered function: (current value at the node, arguments) → new value or nil.
    public typealias Function = @Sendable (Value, Value) -> Value?

    struct Entry: Sendable {
        let name: String
        let version: UInt32
        let function: Function
    }

    /// The functions, looked up by a scan: a replica registers a handful, and a call re-runs at every
    /// re-fold of its region, where hashing the name each time cost more than comparing it.
    private var functions: [Entry] = []

    public init() {}

    /// Registers (or replaces) a function under a versioned name.
    public mutating func register(name: String, version: UInt32, _ function: @escaping Function) {
        functions.removeAll { $0.version == version && $0.name == name }
        functions.append(Entry(name: name, version: version, function: function))
    }

    /// The function registered under that name and version.
    public func function(name: String, version: UInt32) -> Function? {
        functions.first { $0.version == version && $0.name == name }?.function
    }

    /// True when a function is registered under that name and version.
    public func contains(name: String, version: UInt32) -> Bool { function(name: name, version: version) != nil }
}
