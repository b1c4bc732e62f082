import SQLRow

/// One statement and its values, for `SQLConnection.queries`: statements a transaction can send
/// together because none depends on another's answer.
package struct SQLStatement: Sendable {
    package let sql: String
    package let parameters: [SQLValue]

    package init(_ sql: String, _ parameters: [SQLValue]) {
        self.sql = sql
        self.parameters = parameters
    }
}
