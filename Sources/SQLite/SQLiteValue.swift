@_exported import SQLRow

/// The shared value and row types (module SQLRow), under the names this driver's users know.
public typealias SQLiteValue = SQLValue
public typealias Row = SQLRow
