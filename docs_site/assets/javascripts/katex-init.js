// Typesets the math that pymdownx.arithmatex (generic mode) leaves in each page:
//   inline  <span class="arithmatex">\( ... \)</span>
//   display <div class="arithmatex">\[ ... \]</div>
// KaTeX is served with the site (docs_site/hooks/katex_assets.py): no network needed.
(function () {
  "use strict";

  function strip(tex) {
    var t = tex.trim();
    var pairs = [["\\(", "\\)"], ["\\[", "\\]"]];
    for (var i = 0; i < pairs.length; i++) {
      if (t.startsWith(pairs[i][0]) && t.endsWith(pairs[i][1])) {
        return t.slice(2, -2);
      }
    }
    return t;
  }

  function typeset(root) {
    var nodes = root.querySelectorAll(".arithmatex");
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      if (node.getAttribute("data-typeset") === "true") continue;
      katex.render(strip(node.textContent), node, {
        displayMode: node.tagName === "DIV",
        throwOnError: false,
      });
      node.setAttribute("data-typeset", "true");
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { typeset(document.body); });
  } else {
    typeset(document.body);
  }
})();
