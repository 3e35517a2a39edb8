package dev.idgen.bench.scaling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.bench.scaling.Chart.Line;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The plots of SCALING.md are drawn from the scripts' CSV files (what they show is not checked here). */
class PlotCurvesTest {

  @TempDir
  Path dir;

  @Test
  void should_draw_a_png_of_the_expected_size_from_a_tiny_csv() throws Exception {
    Files.writeString(dir.resolve("cost.csv"), """
        date,rate_ids_s,cas_per_million,cold_cas_per_million,model_per_million
        2026-11-24,100,140,900,133.3
        2026-11-24,1000,13,95,13.3
        2026-11-24,1000000,0.06,1.2,0.05
        """);

    StringWriter out = new StringWriter();
    int code = new CommandLine(new PlotCurves()).setOut(new PrintWriter(out))
        .execute("--dir", dir.toString());

    assertThat(code).isZero();
    BufferedImage png = ImageIO.read(dir.resolve("cost.png").toFile());
    assertThat(png.getWidth()).isEqualTo(PlotCurves.WIDTH);
    assertThat(png.getHeight()).isEqualTo(PlotCurves.HEIGHT);
    assertThat(out.toString()).contains("wrote").contains("cost.png").contains("skipped sequences-memory.png");
  }

  @Test
  void should_plot_the_median_of_rows_measured_again_and_only_the_rows_a_line_selects() throws Exception {
    Files.writeString(dir.resolve("servers.csv"), """
        servers,stripes,p999_ms
        1,1,3.0
        1,1,9.0
        1,1,4.0
        2,1,5.0
        1,4,100.0
        """);
    Chart chart = new Chart("servers.csv", "s.png", "t", "servers", "x", "y", false, false,
        List.of(Line.of("1 stripe", "p999_ms").where("stripes", "1")));

    double[][] points = chart.points(Csv.read(dir.resolve("servers.csv")), chart.lines().get(0));

    assertThat(points[0]).containsExactly(1.0, 2.0);
    assertThat(points[1]).containsExactly(4.0, 5.0);
  }

  @Test
  void should_leave_out_non_positive_values_on_a_log_axis_and_skip_a_chart_without_points() throws Exception {
    Files.writeString(dir.resolve("c.csv"), "x,y\n0,1\n10,0\n10,\n");
    Chart chart = new Chart("c.csv", "c.png", "t", "x", "x", "y", true, true, List.of(Line.of("y", "y")));

    boolean drawn = PlotCurves.draw(chart, Csv.read(dir.resolve("c.csv")), dir.resolve("c.png"));

    assertThat(drawn).isFalse();
    assertThat(dir.resolve("c.png")).doesNotExist();
  }

  @Test
  void should_refuse_a_row_whose_number_of_values_differs_from_the_header() throws Exception {
    Files.writeString(dir.resolve("bad.csv"), "a,b\n1,2\n3\n");

    assertThatThrownBy(() -> Csv.read(dir.resolve("bad.csv")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("line 3");
  }
}
