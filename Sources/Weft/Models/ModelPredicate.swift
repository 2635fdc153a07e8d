import Foundation
import WeftCore

/// A condition on the objects of a typed query, written with key paths to fields and checked by the
/// compiler: the comparand has the field's type.
///
/// ```swift
/// let hot: ModelPredicate<Post> = \.$priority > 100 && \.$color == .red
/// let mine: ModelPredicate<Post> = \.$author == alice || !.exists(\.$author)
/// let tagged: ModelPredicate<Post> = .isIn(\.$color, [.red, .blue])
/// ```
///
/// It translates to WeftCore's ``QueryPredicate`` on the fields' child paths (comparands stored as the
/// replica stores the field), so the query layer's indexes serve it when one fits.
public struct ModelPredicate<M: Model> {
    /// The predicate, given the replica's coders (so a comparand is stored as the field would be).
    let build: (ValueCoding) throws -> QueryPredicate

    init(build: @escaping (ValueCoding) throws -> QueryPredicate) { self.build = build }

    /// A comparison of the field `keyPath` names with `value`.
    static func compare<F: QueryableField>(
        _ keyPath: KeyPath<M, F>, _ comparison: QueryComparison, _ value: F.FieldValue
    ) -> ModelPredicate {
        let descriptor = ModelSchema.of(M.self).field(at: keyPath, in: M.self).fieldDescriptor
        return ModelPredicate { coding in
            let field = QueryField(keys: descriptor.keys)
            let stored = try descriptor.encode(value, coding, (try? Path(keys: descriptor.keys)) ?? .root)
            return .compare(field, comparison, stored)
        }
    }

    /// The field equals one of `values`.
    ///
    /// ```swift
    /// try replica.fetch(for: Post.self).where(.isIn(\.$color, [.red, .blue]))
    /// ```
    public static func isIn<F: QueryableField>(_ keyPath: KeyPath<M, F>, _ values: [F.FieldValue]) -> ModelPredicate {
        let descriptor = ModelSchema.of(M.self).field(at: keyPath, in: M.self).fieldDescriptor
        return ModelPredicate { coding in
            let path = (try? Path(keys: descriptor.keys)) ?? .root
            return .isIn(QueryField(keys: descriptor.keys), try values.map { try descriptor.encode($0, coding, path) })
        }
    }

    /// The field holds a value.
    ///
    /// ```swift
    /// try replica.fetch(for: Post.self).where(.exists(\.$subtitle))
    /// ```
    public static func exists<F: QueryableField>(_ keyPath: KeyPath<M, F>) -> ModelPredicate {
        let descriptor = ModelSchema.of(M.self).field(at: keyPath, in: M.self).fieldDescriptor
        return ModelPredicate { _ in .exists(QueryField(keys: descriptor.keys)) }
    }

    /// Both hold.
    public static func && (left: ModelPredicate, right: ModelPredicate) -> ModelPredicate {
        ModelPredicate { coding in .and(try left.build(coding), try right.build(coding)) }
    }

    /// Either holds.
    public static func || (left: ModelPredicate, right: ModelPredicate) -> ModelPredicate {
        ModelPredicate { coding in .or(try left.build(coding), try right.build(coding)) }
    }

    /// It does not hold.
    public static prefix func ! (inner: ModelPredicate) -> ModelPredicate {
        ModelPredicate { coding in .not(try inner.build(coding)) }
    }
}

// MARK: - Comparisons

/// The field equals `value` (numbers by numeric value; `nil` for an optional field: it holds nothing).
///
/// ```swift
/// try replica.fetch(for: Post.self).where(\.$color == .red)
/// ```
public func == <M: Model, F: QueryableField>(keyPath: KeyPath<M, F>, value: F.FieldValue) -> ModelPredicate<M> {
    .compare(keyPath, .equal, value)
}

/// The field differs from `value`.
public func != <M: Model, F: QueryableField>(keyPath: KeyPath<M, F>, value: F.FieldValue) -> ModelPredicate<M> {
    .compare(keyPath, .notEqual, value)
}

/// The field holds a value of `value`'s kind below it.
///
/// ```swift
/// try replica.fetch(for: Post.self).where(\.$priority < 10)
/// ```
public func < <M: Model, F: QueryableField>(keyPath: KeyPath<M, F>, value: F.FieldValue) -> ModelPredicate<M>
where F.FieldValue: Comparable {
    .compare(keyPath, .less, value)
}

/// The field holds a value of `value`'s kind at most it.
public func <= <M: Model, F: QueryableField>(keyPath: KeyPath<M, F>, value: F.FieldValue) -> ModelPredicate<M>
where F.FieldValue: Comparable {
    .compare(keyPath, .lessOrEqual, value)
}

/// The field holds a value of `value`'s kind above it.
///
/// ```swift
/// try replica.fetch(for: Post.self).where(\.$priority > 100)
/// ```
public func > <M: Model, F: QueryableField>(keyPath: KeyPath<M, F>, value: F.FieldValue) -> ModelPredicate<M>
where F.FieldValue: Comparable {
    .compare(keyPath, .greater, value)
}

/// The field holds a value of `value`'s kind at least it.
public func >= <M: Model, F: QueryableField>(keyPath: KeyPath<M, F>, value: F.FieldValue) -> ModelPredicate<M>
where F.FieldValue: Comparable {
    .compare(keyPath, .greaterOrEqual, value)
}
