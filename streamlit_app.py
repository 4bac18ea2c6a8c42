"""rnnlab's app: this file only routes. Pages live in pages/ (registered in ui/nav.py), helpers in ui/."""

import streamlit as st

from ui import nav, sidebar, turns

with turns.render():  # one session's script at a time: sixty at once slowed each other down (ui/turns.py)
    # the page icon is a file of ours: a ":material/..." icon makes every visitor's browser fetch it from a third-party
    # host (tests/pages/test_hosted_browser.py fails on any request that leaves the server)
    st.set_page_config(page_title="rnnlab", page_icon=nav.ICON, layout="wide")
    page = st.navigation([st.Page(p.file, title=p.title, icon=p.icon, url_path=p.url_path, default=p.default)
                          for p in nav.existing()])
    sidebar.render()
    page.run()
