// Sorts a table by the clicked (or Enter/Space-pressed) column; numbers by their data-sort value, n/a last either way.
(function () {
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null) return cell.textContent.trim().toLowerCase();
    return v === "" ? null : parseFloat(v);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          if (x === null || y === null) return x === y ? 0 : (x === null ? 1 : -1);
          var c = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
  });
})();
