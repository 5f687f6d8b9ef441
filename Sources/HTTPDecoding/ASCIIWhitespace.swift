extension StringProtocol {
    /// Without the spaces and tabs at either end (HTTP's optional whitespace), nothing else trimmed.
    func trimmingASCIIWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return String(view)
    }
}
