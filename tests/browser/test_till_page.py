"""The agent's till page (receco-agent emulator) on a 360-pixel-wide screen."""

import pytest
from receco_agent.emulator import EmulatorServer, Till

from tests.agent.support import free_port
from tests.background import serve_in_background


@pytest.fixture
def till_url():
    till = Till(agent_url=f"http://127.0.0.1:{free_port()}", merchant_id="test-mama-put", merchant_name="Mama Put")
    server = EmulatorServer(till, port=free_port())
    stop = serve_in_background(server)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    stop()


def test_the_till_page_fits_a_360_pixel_screen(browser, till_url, artifacts):
    context = browser.new_context(viewport={"width": 360, "height": 740}, device_scale_factor=2)
    page = context.new_page()
    try:
        page.goto(till_url)
        for name, price, quantity in (("Jollof rice with fried plantain", "2500.00", "2"), ("Zobo", "500", "1")):
            page.fill("#item-name", name)
            page.fill("#item-price", price)
            page.fill("#item-qty", quantity)
            page.click("#add-form button[type=submit]")
        assert page.locator("#total").inner_text() == "₦5,500.00"
        widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        page.screenshot(path=artifacts / "till-360x740.png", full_page=True)
        charge = page.locator("#charge").bounding_box()
    finally:
        context.close()
    assert widths == [360, 360]
    assert charge["x"] + charge["width"] <= 360
