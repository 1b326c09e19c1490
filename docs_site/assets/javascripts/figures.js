// Draws the interactive figures of a page with vega-embed. Each figure's Vega-Lite spec and its
// data (computed by the reference code when the docs were built) are embedded in the page as
// <script type="application/json" id="spec-...">; this script only hands them to Vega.
// Every figure marks its container with data-ready="true" once drawn (the browser tests wait for
// it) or data-error with the message if Vega failed.
// On narrow screens (course.css sets --course-layout: narrow) side-by-side charts (hconcat) are
// stacked (vconcat) and no chart is wider than the column, so that none is shrunk to unreadable
// text.
(function () {
  "use strict";

  var MARGIN = 90; // room for a chart's axis labels and titles, in pixels

  function layoutOf(container) {
    var narrowColumn = getComputedStyle(container).getPropertyValue("--course-layout").trim();
    return narrowColumn === "narrow" ? "narrow" : "wide";
  }

  // The spec for a narrow column: side-by-side charts one under the other, no chart wider than
  // the column, and the legends below the charts.
  function narrow(spec, width) {
    function fit(view) {
      var copy = Object.assign({}, view);
      if (typeof view.width === "number") copy.width = Math.min(view.width, width - MARGIN);
      return copy;
    }
    var out = fit(spec);
    if (spec.hconcat) {
      out.vconcat = spec.hconcat.map(fit);
      delete out.hconcat;
    }
    out.config = Object.assign({}, spec.config, {
      legend: Object.assign({}, (spec.config || {}).legend, { orient: "bottom" }),
    });
    return out;
  }

  function specOf(container) {
    return JSON.parse(document.getElementById(container.getAttribute("data-spec")).textContent);
  }

  function draw(container) {
    var spec = specOf(container);
    var layout = layoutOf(container);
    if (layout === "narrow") spec = narrow(spec, container.clientWidth);
    container.setAttribute("data-layout", layout);
    container.removeAttribute("data-ready");
    vegaEmbed(container, spec, { actions: false, renderer: "svg" })
      .then(function () { container.setAttribute("data-ready", "true"); })
      .catch(function (error) {
        container.setAttribute("data-error", String(error));
        container.textContent = String(error);
      });
  }

  function containers() {
    return document.querySelectorAll(".course-vega[data-spec]");
  }

  function drawAll() {
    var all = containers();
    for (var i = 0; i < all.length; i++) draw(all[i]);
  }

  // Turning a phone or resizing a window can cross the stylesheet's width: draw again then.
  function redrawWhereTheLayoutChanged() {
    var all = containers();
    for (var i = 0; i < all.length; i++) {
      if (all[i].getAttribute("data-layout") !== layoutOf(all[i])) draw(all[i]);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawAll);
  } else {
    drawAll();
  }
  window.addEventListener("resize", redrawWhereTheLayoutChanged);
})();
