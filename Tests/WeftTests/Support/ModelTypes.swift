import Foundation

@_spi(Engine) @testable import Weft

/// The models the model tests share.
enum Color: String, Codable, Sendable {
    case red, green, blue
}

final class Person: Model {
    override class var collection: String { "people" }
    @Property var name: String
    @Property var age: Int?
}

final class Address: Model {
    @Property var city: String
    @Property var zip: String?
}

final class Post: Model {
    @Property var title: String
    @Property(key: "prio") var priority = 0
    @Property var color: Color = .red
    @Property var subtitle: String?
    @Property var attachment: Data
    @ReadonlyProperty var createdAt: Date
    @SharedProperty var likes: Int
    @SharedProperty var status: String
    @Values var tags: [String]
    @Nested var address: Address
    @Reference var author: Person?
}
