"""The report of a smoke run, opened in headless Chromium (Debian's chromium + chromium-driver) as a
person would: the page renders, the figures show as images, the comparison shows as a table."""

import io
import struct
import subprocess
import sys

import matplotlib.image
import pandas as pd
import pytest

from conftest import ROOT, SMOKE, require

pytestmark = pytest.mark.browser

# As root, in a closed network: no sandbox, and none of Chromium's background connections.
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1000"]


@pytest.fixture(scope="module")
def report(smoke, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(smoke),
           "--configfile", str(SMOKE), "--report", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return path


@pytest.fixture(scope="module")
def page(report, tmp_path_factory):
    """The report loaded in Chromium, driven through chromedriver."""
    require("chromium", "chromedriver", install="chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.implicitly_wait(10)
    driver.get(report.as_uri())
    yield driver
    driver.quit()


def screenshot(driver, path):
    """Save a screenshot; return it as an (h, w, channels) float array."""
    png = driver.get_screenshot_as_png()
    path.write_bytes(png)
    return matplotlib.image.imread(io.BytesIO(png), format="png")


def is_blank(pixels):
    """Blank = one flat colour: no variation and (almost) no pixel away from the mode."""
    rgb = pixels[..., :3].reshape(-1, 3)
    return rgb.std() < 0.01 or (abs(rgb - rgb[0]).sum(axis=1) > 0.1).mean() < 0.001


def click(driver, element):
    """Scroll an element into view and click it (the menu grows with the workflow's categories,
    so an entry can sit below the fold or under another one)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    driver.execute_script("arguments[0].click();", element)


def show(driver, category, item):
    """Click a results category in the menu, then the eye button of one of its items."""
    from selenium.webdriver.common.by import By

    click(driver, driver.find_element(By.XPATH, f"//nav//span[text()='{category}']"))
    row = driver.find_element(By.XPATH, f"//tr[td[text()='{item}']]")
    click(driver, row.find_element(By.CSS_SELECTOR, "a[iconname='eye']"))


def png_size(path):
    width, height = struct.unpack(">II", path.read_bytes()[16:24])  # IHDR
    return width, height


def home(driver):
    """Reload the report: back to its landing page, the menu rendered."""
    from selenium.webdriver.common.by import By
    driver.refresh()
    driver.find_element(By.XPATH, "//nav//span[text()='Published vs reproduced']")


def test_the_landing_page_renders_with_the_verdict_first(page, smoke, tmp_path):
    from selenium.webdriver.common.by import By

    home(page)
    menu = page.find_element(By.TAG_NAME, "nav").text
    for category in ("Published vs reproduced", "Section 5 — optimizer zoo", "Section 7 — Adam-p dial"):
        assert category in menu
    text = page.find_element(By.ID, "app").text
    assert "Every number in the tables and figures" in text
    # the verdict first: the counts per verdict and section, and every row that is not exact
    comparison = pd.read_csv(smoke / "results/paper/comparison.csv", keep_default_na=False)
    counts = comparison["verdict"].value_counts()
    assert f"{len(comparison)} published numbers and claims of Sections 5–8" in text
    for verdict, n in counts.items():
        assert f"{n} {verdict}" in text, verdict
    assert "System Message" not in page.page_source  # docutils' warnings, rendered into the page
    assert not is_blank(screenshot(page, tmp_path / "landing.png"))
    # a negative control for the blank check: a page with nothing on it
    page.execute_script("document.body.innerHTML = ''; document.body.style.background = 'white';")
    assert is_blank(screenshot(page, tmp_path / "empty.png"))


@pytest.mark.parametrize("category, item, png", [
    ("Section 5 — optimizer zoo", "Figure 1", "results/figures/figure1.png"),
    ("Section 7 — Adam-p dial", "dial figure", "results/figures/dial.png"),
])
def test_each_figure_is_displayed(page, smoke, tmp_path, category, item, png):
    from selenium.webdriver.common.by import By

    home(page)
    show(page, category, item)
    image = page.find_element(By.CSS_SELECTOR, "img[src^='data:image/png']")
    natural = page.execute_script("return [arguments[0].naturalWidth, arguments[0].naturalHeight]", image)
    assert tuple(natural) == png_size(smoke / png), "the image shown is not the figure"
    assert image.size["width"] > 200 and image.size["height"] > 100, image.size
    assert not is_blank(screenshot(page, tmp_path / "figure.png"))


def test_the_comparison_table_is_displayed(page, smoke, tmp_path):
    from selenium.webdriver.common.by import By

    home(page)
    show(page, "Published vs reproduced", "comparison")
    assert not is_blank(screenshot(page, tmp_path / "comparison.png"))
    page.switch_to.frame(page.find_element(By.TAG_NAME, "iframe"))
    try:
        tables = page.find_elements(By.TAG_NAME, "table")
        assert all(t.is_displayed() for t in tables)
        expected = pd.read_csv(smoke / "results/paper/comparison.csv", keep_default_na=False)
        rows = [r for t in tables[1:] for r in t.find_elements(By.XPATH, ".//tr[td]")]  # after the counts
        assert len(rows) == len(expected)
        text = page.find_element(By.TAG_NAME, "body").text
        assert "Verdict" in text
        for heading in dict.fromkeys(expected["section"]):
            assert heading in text
        for verdict in set(expected["verdict"]):
            assert verdict in text
    finally:
        page.switch_to.default_content()
