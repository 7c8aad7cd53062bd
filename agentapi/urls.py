from django.urls import re_path

from agentapi import views

urlpatterns = [
    re_path(r"^(?P<path>.*)$", views.trpc, name="trpc"),
]
