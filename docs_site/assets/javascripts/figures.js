// Draws the interactive figures of a page with vega-embed. Each figure's Vega-Lite spec and its
// data (computed by the reference code when the docs were built) are embedded in the page as
// <script type="application/json" id="spec-...">; this script only hands them to Vega.
// Every figure marks its container with data-ready="true" once drawn (the browser tests wait for
// it) or data-error with the message if Vega failed.
(function () {
  "use strict";

  function draw(container) {
    var source = document.getElementById(container.getAttribute("data-spec"));
    var spec = JSON.parse(source.textContent);
    vegaEmbed(container, spec, { actions: false, renderer: "svg" })
      .then(function () { container.setAttribute("data-ready", "true"); })
      .catch(function (error) {
        container.setAttribute("data-error", String(error));
        container.textContent = String(error);
      });
  }

  function drawAll() {
    var containers = document.querySelectorAll(".course-vega[data-spec]");
    for (var i = 0; i < containers.length; i++) draw(containers[i]);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawAll);
  } else {
    drawAll();
  }
})();
