from django.urls import path

from agentapi.log import views

app_name = "ledger"

urlpatterns = [
    path("checkpoint", views.checkpoint, name="checkpoint"),
    path("proof/<str:token>", views.proof, name="proof"),
    path("consistency", views.consistency, name="consistency"),
]
