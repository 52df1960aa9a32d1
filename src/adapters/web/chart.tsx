/** One line of a chart: its values, one per x (null: no value there). */
export type ChartSeries = { label: string; color: string; values: (number | null)[] };

/**
 * A time-series chart drawn by uPlot in the browser (the page must be rendered with `charts: true`). The numbers
 * travel as JSON in an attribute, not as an inline script, which the Content-Security-Policy refuses. Without
 * JavaScript the box shows `fallback`; pages put the same numbers in a table beside it.
 */
export function Chart(props: {
  id: string;
  label: string;
  x: Date[];
  series: ChartSeries[];
  y: string;
  max?: number;
  fallback: string;
}) {
  const spec = {
    x: props.x.map((d) => Math.floor(d.getTime() / 1000)),
    y: props.y,
    max: props.max,
    series: props.series,
  };
  return (
    <div class="chart" id={props.id} role="img" aria-label={props.label} data-chart={JSON.stringify(spec)}>
      <p class="muted">{props.fallback}</p>
    </div>
  );
}
