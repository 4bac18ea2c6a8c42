"""rnnlab's app: this file only routes. Pages live in pages/ (registered in ui/nav.py), helpers in ui/."""

import streamlit as st

from ui import nav, sidebar

st.set_page_config(page_title="rnnlab", page_icon=":material/linear_scale:", layout="wide")
page = st.navigation([st.Page(p.file, title=p.title, icon=p.icon, url_path=p.url_path, default=p.default)
                      for p in nav.existing()])
sidebar.render()
page.run()
