"""The merchant dashboard's admin site: Django's, named for the product, with a home page
of today's figures, and every URL scoped to the user's merchants.

Django's "view on site" shortcut (``/admin/r/<content type>/<id>/``) redirects any staff
user to any object's page; here it goes only to objects the user may view in this site
(merchants.scoping), and answers 404 for everything else, malformed ids included.
"""

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.contenttypes.models import ContentType
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path

from merchants.models import Merchant
from merchants.scoping import merchant_ids
from receipts.today import today

# The home page shows today's figures of at most this many merchants (an operator has
# every merchant; the list of merchants is the place to find the others).
HOME_MERCHANTS = 12


class DashboardSite(admin.AdminSite):
    site_header = "Receco dashboard"
    site_title = "Receco dashboard"
    index_title = "Today"
    site_url = "/"  # the public home page, which sends customers to the scanner

    def index(self, request: HttpRequest, extra_context=None) -> TemplateResponse:
        """The home page: today's receipts, takings and deliveries of each of the user's merchants."""
        ids = merchant_ids(request)
        merchants = Merchant.objects.all() if ids is None else Merchant.objects.filter(pk__in=ids)
        days = [today(merchant) for merchant in merchants[:HOME_MERCHANTS]]
        more = len(days) == HOME_MERCHANTS and merchants.count() > HOME_MERCHANTS
        return super().index(request, {"days": days, "more_merchants": more, **(extra_context or {})})

    def get_urls(self):
        scoped = path(
            "r/<int:content_type_id>/<path:object_id>/", self.admin_view(self.view_on_site), name="view_on_site"
        )
        return [scoped if getattr(url, "name", None) == "view_on_site" else url for url in super().get_urls()]

    def view_on_site(self, request: HttpRequest, content_type_id: int, object_id: str) -> HttpResponseRedirect:
        """Redirect to the page of an object this user may view here; Http404 otherwise."""
        try:
            model = ContentType.objects.get_for_id(content_type_id).model_class()
        except ContentType.DoesNotExist:
            raise Http404 from None
        model_admin = self._registry.get(model)
        if model_admin is None or not model_admin.view_on_site:
            raise Http404
        # The admin's own look-up: its queryset is scoped, and a malformed id gives None.
        obj = model_admin.get_object(request, unquote(object_id))
        if obj is None or not model_admin.has_view_or_change_permission(request, obj):
            raise Http404
        if callable(model_admin.view_on_site):
            url = model_admin.view_on_site(obj)
        else:
            url = getattr(obj, "get_absolute_url", lambda: None)()
        if not url:
            raise Http404
        return HttpResponseRedirect(url)
