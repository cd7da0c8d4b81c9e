/// Rows of report.html's tables, written here rather than by the template: the endpoint table
/// alone has thousands of cells, and the template engine finds each one by name through its
/// context stack (dynamic casts and reflection per lookup), which was most of the page's time.
/// The template places the rows whole (`{{{…}}}`); every text from the run goes through
/// `HTMLByteEscaping.escape`, the escaping the template applies to `{{…}}`, so the page is the
/// same bytes either way.
struct HTMLRows {
    private var bytes: [UInt8] = []

    init() {}

    /// The page's own markup, written as it is.
    mutating func markup(_ markup: StaticString) {
        markup.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Text from the run, escaped.
    mutating func text(_ text: String) {
        HTMLByteEscaping.escape(text, into: &bytes)
    }

    /// `<td>text</td>`, or right-aligned (`class="n"`) for a figure.
    mutating func cell(_ text: String, numeric: Bool) {
        markup(numeric ? "<td class=\"n\">" : "<td>")
        self.text(text)
        markup("</td>")
    }

    /// `<td class="n">` and the bytes as `TextFormat.bytes` writes them (digits, `,` and `-`:
    /// nothing to escape).
    mutating func bytesCell(_ value: Int) {
        markup("<td class=\"n\">")
        TextFormat.appendBytes(value, to: &bytes)
        markup("</td>")
    }

    /// A row of `cells`, each told text or figure by `numeric`, and its line end.
    mutating func row(_ cells: [(text: String, numeric: Bool)]) {
        markup("<tr>")
        for cell in cells { self.cell(cell.text, numeric: cell.numeric) }
        markup("</tr>\n")
    }

    /// A row whose first `leadingTexts` cells are text and the rest figures.
    mutating func row(_ cells: some Sequence<String>, leadingTexts: Int) {
        markup("<tr>")
        flatCells(cells, leadingTexts: leadingTexts)
        markup("</tr>\n")
    }

    /// The cells of a row without its `<tr>`: the first `leadingTexts` text, the rest figures.
    mutating func flatCells(_ cells: some Sequence<String>, leadingTexts: Int) {
        for (position, text) in cells.enumerated() { cell(text, numeric: position >= leadingTexts) }
    }

    var html: String { String(decoding: bytes, as: UTF8.self) }

    /// `<th>name</th>` for each of `names`: a table's column headings.
    static func headings(_ names: [String]) -> String {
        var row = HTMLRows()
        for name in names {
            row.markup("<th>")
            row.text(name)
            row.markup("</th>")
        }
        return row.html
    }

    /// Headings over groups of columns: each spans its columns (`colspan`).
    static func groupHeadings(_ groups: [(name: String, span: Int)]) -> String {
        var row = HTMLRows()
        for group in groups {
            row.markup("<th colspan=\"")
            row.text(String(group.span))
            row.markup("\" class=\"group\">")
            row.text(group.name)
            row.markup("</th>")
        }
        return row.html
    }
}
